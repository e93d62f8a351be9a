/* An in-situ hook in plain C against the installed rewind/insitu.h: appends
 * "step S grids G" to the file named by [insitu] args ("log=PATH") at every call. */
#include <rewind/insitu.h>
#include <stdio.h>
#include <string.h>

REWIND_INSITU_DEFINE_ABI_VERSION()

static char log_path[4096];

int rewind_insitu_init(const rewind_insitu_init_info* info, char* error, int error_size) {
  if (strncmp(info->args, "log=", 4) != 0 || strlen(info->args + 4) >= sizeof log_path) {
    snprintf(error, (size_t)error_size, "consumer_hook: args must be log=PATH, got '%s'", info->args);
    return 1;
  }
  strcpy(log_path, info->args + 4);
  return 0;
}

int rewind_insitu_step(const rewind_insitu_step_desc* step, char* error, int error_size) {
  FILE* f = fopen(log_path, "a");
  if (!f) {
    snprintf(error, (size_t)error_size, "consumer_hook: cannot open %s", log_path);
    return 1;
  }
  fprintf(f, "step %lld grids %lld\n", (long long)step->step, (long long)step->n_grids);
  fclose(f);
  return 0;
}

int rewind_insitu_finalize(char* error, int error_size) {
  (void)error, (void)error_size;
  return 0;
}
