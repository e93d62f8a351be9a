/* rewind/insitu.h is plain C: this file includes it (twice) and defines a hook in C. */
#include <rewind/insitu.h>
#include <rewind/insitu.h>

REWIND_INSITU_DEFINE_ABI_VERSION()

int rewind_insitu_init(const rewind_insitu_init_info* info, char* error, int error_size) {
  (void)info, (void)error, (void)error_size;
  return 0;
}
int rewind_insitu_step(const rewind_insitu_step_desc* step, char* error, int error_size) {
  (void)step, (void)error, (void)error_size;
  return 0;
}
int rewind_insitu_finalize(char* error, int error_size) {
  (void)error, (void)error_size;
  return 0;
}
