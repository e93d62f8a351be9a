! Rewind's Fortran API: the module `rewind`, over the C API (api/include/rewind/rewind.h,
! whose comments are the reference for what each call does). Fortran 2008 + ISO_C_BINDING.
! Shaped like ADIOS2's Fortran bindings: a derived type per handle, and subroutines whose
! last argument is an optional status.
!
!   use rewind
!   type(rewind_config) :: cfg
!   type(rewind_grids) :: grids
!   type(rewind_file) :: file
!   call rewind_config_create(cfg)
!   call rewind_config_set_geometry(cfg, 3, [16, 16, 16], 2, [0d0, 1d0, 0d0, 1d0, 0d0, 1d0])
!   call rewind_config_add_variable(cfg, 'T', 'K')
!   call rewind_grids_create(grids, 1)
!   call rewind_grids_add(grids, uid, level, key, bbox, parent, children, index)
!   call rewind_grids_set_field(grids, index, 0, t)      ! t: real(8), target, contiguous
!   call rewind_file_create(file, MPI_COMM_WORLD, 'run.h5', cfg)
!   call rewind_file_set_scalar(file, 'energy', e)       ! the step's monitors (optional)
!   call rewind_file_write(file, step, time, dt, REWIND_CHECKPOINT, grids)
!   call rewind_file_close(file)
!
! Handles: type(rewind_config), type(rewind_grids), type(rewind_file), type(rewind_reader),
! type(rewind_live) — opaque; one handle cannot be passed where another is expected (the
! compiler refuses it). Errors: every subroutine takes an optional `ierr` as its last
! argument (pass it by keyword after an omitted optional one). Present, it receives the
! status (REWIND_OK = 0 or the error; rewind_last_error() is the message) and the program
! goes on; absent, a failure prints "rewind: <message>" on the error unit and stops the
! program (error stop) — a collective call fails alike on every rank, so every rank stops.
! Communicators are the integer handles of `use mpi` (for mpi_f08, pass comm%MPI_VAL).
! Arrays handed to rewind_grids_set_field must be contiguous and keep their address until
! the write (TARGET or POINTER, not a temporary): the library reads them during
! rewind_file_write. Arrays are (x, y, z) with the ghost layers included, x fastest, as the
! C API's (z, y, x). UIDs are 64-bit integers (the C API's unsigned bits); REWIND_NO_UID
! (-1) is "no parent". Beside the C API's calls: rewind_grids_set_field takes real(c_float)
! arrays too (rewind_grids_set_field_float); rewind_reader_read_into fills dest(:, :, :, i)
! (a padded block per row); rewind_library_api_version() is the C API's
! rewind_api_version(). The C declarations themselves are the module rewind_c
! (rewind_c.f90), not for codes.
module rewind
  use, intrinsic :: iso_c_binding
  use rewind_c
  use rewind_base
  use rewind_steering
  implicit none
  private
  public :: rewind_step_entry  ! the C API's rewind_step_entry (rewind_c.f90)
  public :: REWIND_API_VERSION, REWIND_OK, REWIND_ERR_ARGUMENT, REWIND_ERR_NOT_FOUND, REWIND_ERR_FORMAT, &
            REWIND_ERR_NO_SUCH_STEP, REWIND_ERR_CORRUPT, REWIND_ERR_IO, REWIND_ERR_STATE, REWIND_ERR_VERSION, &
            REWIND_ERR_EXISTS, REWIND_ERR_INTERNAL, REWIND_ERR_CLAIMED, REWIND_ERR_NETWORK, REWIND_VISUALISATION, &
            REWIND_CHECKPOINT, REWIND_COLLECTOR_THREAD, REWIND_COLLECTOR_RANK, REWIND_EVENT_SET, REWIND_EVENT_STOP, &
            REWIND_EVENT_BRANCH, REWIND_NO_UID
  public :: rewind_config, rewind_grids, rewind_file, rewind_reader, rewind_live, rewind_tree, rewind_event
  public :: rewind_last_error, rewind_library_version, rewind_library_api_version
  public :: rewind_config_create, rewind_config_free, rewind_config_set_geometry, rewind_config_add_variable, &
            rewind_config_set_option, rewind_config_set_text, rewind_config_set_constant
  public :: rewind_grids_create, rewind_grids_free, rewind_grids_clear, rewind_grids_add, rewind_grids_set_field, &
            rewind_grids_set_cell_type, rewind_grids_count
  public :: rewind_file_create, rewind_file_create_branch, rewind_file_append, rewind_file_set_scalar, &
            rewind_file_write, rewind_file_last_step, rewind_file_close
  public :: rewind_live_start, rewind_live_port, rewind_live_declare, rewind_live_boundary, rewind_live_next_event, &
            rewind_live_finish, rewind_live_allow_futures
  public :: rewind_reader_open, rewind_reader_close, rewind_reader_step_count, rewind_reader_step_at, &
            rewind_reader_find_step, rewind_reader_find_checkpoint, rewind_reader_topology, rewind_reader_partition, &
            rewind_reader_read, rewind_reader_read_into, rewind_reader_lineage, rewind_reader_variable_count, &
            rewind_reader_variable, rewind_reader_scalar_count, rewind_reader_scalar

  !> rewind_grids_set_field for arrays of rank 1 to 4 (a grid's padded block, or a slab).
  interface rewind_grids_set_field
    module procedure set_field_1, set_field_2, set_field_3, set_field_4
    ! real(c_float) arrays: rewind_grids_set_field_float (stored as the file's type)
    module procedure set_field_float_1, set_field_float_2, set_field_float_3, set_field_float_4
  end interface

contains

  ! --- config -------------------------------------------------------------------------

  subroutine rewind_config_create(cfg, ierr)
    type(rewind_config), intent(out) :: cfg
    integer, intent(out), optional :: ierr
    call done(c_config_create(cfg%p, REWIND_API_VERSION), ierr)
  end subroutine

  subroutine rewind_config_free(cfg, ierr)
    type(rewind_config), intent(inout) :: cfg
    integer, intent(out), optional :: ierr
    call closed(c_config_free(cfg%p), cfg%p, ierr)
  end subroutine

  subroutine rewind_config_set_geometry(cfg, dim, cells, refinement, domain, ierr)
    type(rewind_config), intent(in) :: cfg
    integer, intent(in) :: dim, cells(3), refinement
    real(c_double), intent(in) :: domain(6)
    integer, intent(out), optional :: ierr
    call done(c_config_set_geometry(cfg%p, int(dim, c_int), int(cells, c_int), int(refinement, c_int), domain), ierr)
  end subroutine

  subroutine rewind_config_add_variable(cfg, name, unit, ierr)
    type(rewind_config), intent(in) :: cfg
    character(len=*), intent(in) :: name, unit
    integer, intent(out), optional :: ierr
    call done(c_config_add_variable(cfg%p, c_str(name), c_str(unit)), ierr)
  end subroutine

  subroutine rewind_config_set_option(cfg, name, value, ierr)
    type(rewind_config), intent(in) :: cfg
    character(len=*), intent(in) :: name, value
    integer, intent(out), optional :: ierr
    call done(c_config_set_option(cfg%p, c_str(name), c_str(value)), ierr)
  end subroutine

  subroutine rewind_config_set_text(cfg, key, value, ierr)
    type(rewind_config), intent(in) :: cfg
    character(len=*), intent(in) :: key, value
    integer, intent(out), optional :: ierr
    call done(c_config_set_text(cfg%p, c_str(key), c_str(value)), ierr)
  end subroutine

  subroutine rewind_config_set_constant(cfg, group, name, value, ierr)
    type(rewind_config), intent(in) :: cfg
    character(len=*), intent(in) :: group, name
    real(c_double), intent(in) :: value
    integer, intent(out), optional :: ierr
    call done(c_config_set_constant(cfg%p, c_str(group), c_str(name), value), ierr)
  end subroutine

  ! --- grids -------------------------------------------------------------------------

  subroutine rewind_grids_create(grids, halo, ierr)
    type(rewind_grids), intent(out) :: grids
    integer, intent(in) :: halo
    integer, intent(out), optional :: ierr
    call done(c_grids_create(grids%p, int(halo, c_int), REWIND_API_VERSION), ierr)
  end subroutine

  subroutine rewind_grids_free(grids, ierr)
    type(rewind_grids), intent(inout) :: grids
    integer, intent(out), optional :: ierr
    call closed(c_grids_free(grids%p), grids%p, ierr)
  end subroutine

  subroutine rewind_grids_clear(grids, ierr)
    type(rewind_grids), intent(in) :: grids
    integer, intent(out), optional :: ierr
    call done(c_grids_clear(grids%p), ierr)
  end subroutine

  !> Adds a grid of this rank; `index` receives its index (0-based, for set_field).
  subroutine rewind_grids_add(grids, uid, level, sort_key, bbox, parent_uid, child_uids, index, ierr)
    type(rewind_grids), intent(in) :: grids
    integer(c_int64_t), intent(in) :: uid, sort_key, parent_uid
    integer, intent(in) :: level
    real(c_double), intent(in) :: bbox(6)
    integer(c_int64_t), intent(in) :: child_uids(:)
    integer(c_int64_t), intent(out) :: index
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: none(1)
    if (size(child_uids) > 0) then
      call done(c_grids_add(grids%p, uid, int(level, c_int), sort_key, bbox, parent_uid, &
                            int(size(child_uids), c_int), child_uids, index), ierr)
    else
      none = 0
      call done(c_grids_add(grids%p, uid, int(level, c_int), sort_key, bbox, parent_uid, 0_c_int, none, index), ierr)
    end if
  end subroutine

  subroutine set_field_1(grids, index, slot, data, ierr)
    type(rewind_grids), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer, intent(in) :: slot
    real(c_double), intent(in), target, contiguous :: data(:)
    integer, intent(out), optional :: ierr
    call done(c_grids_set_field(grids%p, index, int(slot, c_int), c_loc(data)), ierr)
  end subroutine

  subroutine set_field_2(grids, index, slot, data, ierr)
    type(rewind_grids), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer, intent(in) :: slot
    real(c_double), intent(in), target, contiguous :: data(:, :)
    integer, intent(out), optional :: ierr
    call done(c_grids_set_field(grids%p, index, int(slot, c_int), c_loc(data)), ierr)
  end subroutine

  subroutine set_field_3(grids, index, slot, data, ierr)
    type(rewind_grids), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer, intent(in) :: slot
    real(c_double), intent(in), target, contiguous :: data(:, :, :)
    integer, intent(out), optional :: ierr
    call done(c_grids_set_field(grids%p, index, int(slot, c_int), c_loc(data)), ierr)
  end subroutine

  subroutine set_field_4(grids, index, slot, data, ierr)
    type(rewind_grids), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer, intent(in) :: slot
    real(c_double), intent(in), target, contiguous :: data(:, :, :, :)
    integer, intent(out), optional :: ierr
    call done(c_grids_set_field(grids%p, index, int(slot, c_int), c_loc(data)), ierr)
  end subroutine

  subroutine set_field_float_1(grids, index, slot, data, ierr)
    type(rewind_grids), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer, intent(in) :: slot
    real(c_float), intent(in), target, contiguous :: data(:)
    integer, intent(out), optional :: ierr
    call done(c_grids_set_field_float(grids%p, index, int(slot, c_int), c_loc(data)), ierr)
  end subroutine

  subroutine set_field_float_2(grids, index, slot, data, ierr)
    type(rewind_grids), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer, intent(in) :: slot
    real(c_float), intent(in), target, contiguous :: data(:, :)
    integer, intent(out), optional :: ierr
    call done(c_grids_set_field_float(grids%p, index, int(slot, c_int), c_loc(data)), ierr)
  end subroutine

  subroutine set_field_float_3(grids, index, slot, data, ierr)
    type(rewind_grids), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer, intent(in) :: slot
    real(c_float), intent(in), target, contiguous :: data(:, :, :)
    integer, intent(out), optional :: ierr
    call done(c_grids_set_field_float(grids%p, index, int(slot, c_int), c_loc(data)), ierr)
  end subroutine

  subroutine set_field_float_4(grids, index, slot, data, ierr)
    type(rewind_grids), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer, intent(in) :: slot
    real(c_float), intent(in), target, contiguous :: data(:, :, :, :)
    integer, intent(out), optional :: ierr
    call done(c_grids_set_field_float(grids%p, index, int(slot, c_int), c_loc(data)), ierr)
  end subroutine

  !> Grids described on this rank.
  subroutine rewind_grids_count(grids, n, ierr)
    type(rewind_grids), intent(in) :: grids
    integer(c_int64_t), intent(out) :: n
    integer, intent(out), optional :: ierr
    call done(c_grids_count(grids%p, n), ierr)
  end subroutine

  subroutine rewind_grids_set_cell_type(grids, index, types, ierr)
    type(rewind_grids), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer(c_int8_t), intent(in), target, contiguous :: types(:, :, :)
    integer, intent(out), optional :: ierr
    call done(c_grids_set_cell_type(grids%p, index, c_loc(types)), ierr)
  end subroutine

  ! --- file (written) ---------------------------------------------------------------

  subroutine rewind_file_create(file, comm, path, cfg, ierr)
    type(rewind_file), intent(out) :: file
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path
    type(rewind_config), intent(in) :: cfg
    integer, intent(out), optional :: ierr
    call done(c_file_create(file%p, int(comm, c_int), c_str(path), cfg%p), ierr)
  end subroutine

  !> A branch of `parent`'s step `parent_step`, recording `changes` ("key=value" each);
  !> `cfg` absent: the default options.
  subroutine rewind_file_create_branch(file, comm, path, parent, parent_step, changes, cfg, ierr)
    type(rewind_file), intent(out) :: file
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path, parent
    integer(c_int64_t), intent(in) :: parent_step
    character(len=*), intent(in) :: changes(:)
    type(rewind_config), intent(in), optional :: cfg
    integer, intent(out), optional :: ierr
    character(kind=c_char, len=len(changes) + 1), allocatable, target :: buf(:)
    type(c_ptr), allocatable :: ptrs(:)
    integer :: i
    allocate (buf(max(size(changes), 1)), ptrs(max(size(changes), 1)))
    do i = 1, size(changes)
      buf(i) = trim(changes(i))//c_null_char
      ptrs(i) = c_loc(buf(i))
    end do
    if (size(changes) == 0) ptrs(1) = c_null_ptr
    call done(c_file_create_branch(file%p, int(comm, c_int), c_str(path), c_str(parent), parent_step, &
                                   int(size(changes), c_int), ptrs, cfg_or_null(cfg)), ierr)
  end subroutine

  !> Continues an existing file; `cfg` absent: the default options.
  subroutine rewind_file_append(file, comm, path, cfg, ierr)
    type(rewind_file), intent(out) :: file
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path
    type(rewind_config), intent(in), optional :: cfg
    integer, intent(out), optional :: ierr
    call done(c_file_append(file%p, int(comm, c_int), c_str(path), cfg_or_null(cfg)), ierr)
  end subroutine

  !> A named scalar of the next step written (a monitor: drag, energy, a residual). Local;
  !> the next rewind_file_write agrees on the list across ranks and stores it.
  subroutine rewind_file_set_scalar(file, name, value, ierr)
    type(rewind_file), intent(in) :: file
    character(len=*), intent(in) :: name
    real(c_double), intent(in) :: value
    integer, intent(out), optional :: ierr
    call done(c_file_set_scalar(file%p, c_str(name), value), ierr)
  end subroutine

  !> Writes a step; `vars` (0-based slots) picks a visualisation step's variables (all if
  !> absent), `float32` stores them in single precision.
  subroutine rewind_file_write(file, step, time, dt, kind, grids, vars, float32, ierr)
    type(rewind_file), intent(in) :: file
    integer(c_int64_t), intent(in) :: step
    real(c_double), intent(in) :: time, dt
    integer, intent(in) :: kind
    type(rewind_grids), intent(in) :: grids
    integer, intent(in), optional :: vars(:)
    logical, intent(in), optional :: float32
    integer, intent(out), optional :: ierr
    integer(c_int) :: f32, none(1)
    f32 = 0
    if (present(float32)) then
      if (float32) f32 = 1
    end if
    none = 0
    if (present(vars)) then
      call done(c_file_write(file%p, step, time, dt, int(kind, c_int), grids%p, int(size(vars), c_int), &
                             int(vars, c_int), f32), ierr)
    else
      call done(c_file_write(file%p, step, time, dt, int(kind, c_int), grids%p, 0_c_int, none, f32), ierr)
    end if
  end subroutine

  !> The last committed step's number, -1 if none.
  subroutine rewind_file_last_step(file, step, ierr)
    type(rewind_file), intent(in) :: file
    integer(c_int64_t), intent(out) :: step
    integer, intent(out), optional :: ierr
    call done(c_file_last_step(file%p, step), ierr)
  end subroutine

  subroutine rewind_file_close(file, ierr)
    type(rewind_file), intent(inout) :: file
    integer, intent(out), optional :: ierr
    call closed(c_file_close(file%p), file%p, ierr)
  end subroutine

  ! --- reader --------------------------------------------------------------------------

  !> comm: a communicator for collective reads, or MPI_COMM_NULL for a serial reader.
  subroutine rewind_reader_open(reader, comm, path, ierr)
    type(rewind_reader), intent(out) :: reader
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path
    integer, intent(out), optional :: ierr
    call done(c_reader_open(reader%p, int(comm, c_int), c_str(path)), ierr)
  end subroutine

  subroutine rewind_reader_close(reader, ierr)
    type(rewind_reader), intent(inout) :: reader
    integer, intent(out), optional :: ierr
    call closed(c_reader_close(reader%p), reader%p, ierr)
  end subroutine

  subroutine rewind_reader_step_count(reader, n, ierr)
    type(rewind_reader), intent(in) :: reader
    integer(c_int64_t), intent(out) :: n
    integer, intent(out), optional :: ierr
    call done(c_reader_step_count(reader%p, n), ierr)
  end subroutine

  !> The i-th committed step, 0-based (-1: the last).
  subroutine rewind_reader_step_at(reader, i, entry, ierr)
    type(rewind_reader), intent(in) :: reader
    integer(c_int64_t), intent(in) :: i
    type(rewind_step_entry), intent(out) :: entry
    integer, intent(out), optional :: ierr
    call done(c_reader_step_at(reader%p, i, entry), ierr)
  end subroutine

  subroutine rewind_reader_find_step(reader, selector, entry, ierr)
    type(rewind_reader), intent(in) :: reader
    character(len=*), intent(in) :: selector
    type(rewind_step_entry), intent(out) :: entry
    integer, intent(out), optional :: ierr
    call done(c_reader_find_step(reader%p, c_str(selector), entry), ierr)
  end subroutine

  !> The checkpoint to restart from (rewind.h: rewind_reader_find_checkpoint, the choice of
  !> `rewind run --restart FILE@SEL`); `note`, if present, the line to print ('' if none).
  subroutine rewind_reader_find_checkpoint(reader, selector, entry, note, ierr)
    type(rewind_reader), intent(in) :: reader
    character(len=*), intent(in) :: selector
    type(rewind_step_entry), intent(out) :: entry
    character(len=:), allocatable, intent(out), optional :: note
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    integer(c_int) :: rc
    rc = c_reader_find_checkpoint(reader%p, c_str(selector), entry, p)
    if (present(note)) then
      note = ''
      if (rc == REWIND_OK) note = f_str(p)
    end if
    call done(rc, ierr)
  end subroutine

  subroutine rewind_reader_topology(reader, step, tree, ierr)
    type(rewind_reader), intent(in) :: reader
    integer(c_int64_t), intent(in) :: step
    type(rewind_tree), intent(out) :: tree
    integer, intent(out), optional :: ierr
    type(c_topology) :: t
    integer(c_int64_t) :: n
    integer :: mc
    integer(c_int) :: rc
    rc = c_reader_topology(reader%p, step, t)
    call done(rc, ierr)
    if (rc /= REWIND_OK) return
    n = t%n_grids
    mc = int(t%max_children)
    tree%n_grids = n
    tree%max_children = mc
    tree%n_levels = int(t%n_levels)
    call c_f_pointer(t%uid, tree%uid, [n])
    call c_f_pointer(t%sort_key, tree%sort_key, [n])
    call c_f_pointer(t%parent_uid, tree%parent_uid, [n])
    call c_f_pointer(t%level, tree%level, [n])
    call c_f_pointer(t%parent_row, tree%parent_row, [n])
    call c_f_pointer(t%child_uids, tree%child_uids, [int(mc, c_int64_t), n])
    call c_f_pointer(t%child_rows, tree%child_rows, [int(mc, c_int64_t), n])
    call c_f_pointer(t%bbox, tree%bbox, [6_c_int64_t, n])
    call c_f_pointer(t%level_offsets, tree%level_offsets, [int(t%n_levels, c_int64_t) + 1])
  end subroutine

  !> The file's 0-based rows `rank` of `nranks` takes for a restart (reader memory,
  !> valid until its next partition call).
  subroutine rewind_reader_partition(reader, step, rank, nranks, rows, ierr)
    type(rewind_reader), intent(in) :: reader
    integer(c_int64_t), intent(in) :: step
    integer, intent(in) :: rank, nranks
    integer(c_int64_t), pointer, intent(out) :: rows(:)
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: n
    type(c_ptr) :: p
    integer(c_int) :: rc
    rows => null()
    rc = c_reader_partition(reader%p, step, int(rank, c_int), int(nranks, c_int), n, p)
    if (rc == REWIND_OK) call c_f_pointer(p, rows, [n])
    call done(rc, ierr)
  end subroutine

  !> Variable `name` of the 0-based `rows` into `out` (size(rows) * cells values, interior
  !> only, row after row, x fastest). Collective for a collective reader.
  subroutine rewind_reader_read(reader, step, name, rows, out, ierr)
    type(rewind_reader), intent(in) :: reader
    integer(c_int64_t), intent(in) :: step
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: rows(:)
    real(c_double), intent(out), contiguous :: out(:)
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: none(1)
    none = 0
    if (size(rows) > 0) then
      call done(c_reader_read(reader%p, step, c_str(name), int(size(rows), c_int64_t), rows, out), ierr)
    else
      call done(c_reader_read(reader%p, step, c_str(name), 0_c_int64_t, none, out), ierr)
    end if
  end subroutine

  !> Reads variable `name` of the file's 0-based `rows` straight into padded blocks:
  !> dest(:, :, :, i) (with `halo` ghost layers, left alone) receives rows(i).
  subroutine rewind_reader_read_into(reader, step, name, rows, dest, halo, ierr)
    type(rewind_reader), intent(in) :: reader
    integer(c_int64_t), intent(in) :: step
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: rows(:)
    real(c_double), intent(inout), target, contiguous :: dest(:, :, :, :)
    integer, intent(in) :: halo
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p(max(size(rows), 1))
    integer :: i
    if (size(dest, 4) < size(rows)) then  ! the C call cannot see the array's shape
      call done(c_reader_read_into(reader%p, step, c_str(name), -1_c_int64_t, rows, p, int(halo, c_int)), ierr)
      return
    end if
    do i = 1, size(rows)
      p(i) = c_loc(dest(1, 1, 1, i))
    end do
    call done(c_reader_read_into(reader%p, step, c_str(name), int(size(rows), c_int64_t), rows, p, &
                                 int(halo, c_int)), ierr)
  end subroutine

  subroutine rewind_reader_lineage(reader, parent_file, parent_step, parent_time, ierr)
    type(rewind_reader), intent(in) :: reader
    character(len=:), allocatable, intent(out) :: parent_file
    integer(c_int64_t), intent(out) :: parent_step
    real(c_double), intent(out) :: parent_time
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = c_null_ptr
    call done(c_reader_lineage(reader%p, p, parent_step, parent_time), ierr)
    parent_file = f_str(p)
  end subroutine

  !> The file's number of variables.
  subroutine rewind_reader_variable_count(reader, n, ierr)
    type(rewind_reader), intent(in) :: reader
    integer, intent(out) :: n
    integer, intent(out), optional :: ierr
    integer(c_int) :: cn
    cn = 0
    call done(c_reader_variable_count(reader%p, cn), ierr)
    n = int(cn)
  end subroutine

  !> The name and unit of variable `i` (0-based, as the slots of rewind_grids_set_field).
  subroutine rewind_reader_variable(reader, i, name, unit, ierr)
    type(rewind_reader), intent(in) :: reader
    integer, intent(in) :: i
    character(len=:), allocatable, intent(out) :: name, unit
    integer, intent(out), optional :: ierr
    type(c_ptr) :: pn, pu
    pn = c_null_ptr
    pu = c_null_ptr
    call done(c_reader_variable(reader%p, int(i, c_int), pn, pu), ierr)
    name = f_str(pn)
    unit = f_str(pu)
  end subroutine

  !> The number of named scalars of committed `step` (0 if none).
  subroutine rewind_reader_scalar_count(reader, step, n, ierr)
    type(rewind_reader), intent(in) :: reader
    integer(c_int64_t), intent(in) :: step
    integer, intent(out) :: n
    integer, intent(out), optional :: ierr
    integer(c_int) :: cn
    cn = 0
    call done(c_reader_scalar_count(reader%p, step, cn), ierr)
    n = int(cn)
  end subroutine

  !> The name and value of named scalar `i` (0-based, in the order written) of `step`.
  subroutine rewind_reader_scalar(reader, step, i, name, value, ierr)
    type(rewind_reader), intent(in) :: reader
    integer(c_int64_t), intent(in) :: step
    integer, intent(in) :: i
    character(len=:), allocatable, intent(out) :: name
    real(c_double), intent(out) :: value
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = c_null_ptr
    value = 0
    call done(c_reader_scalar(reader%p, step, int(i, c_int), p, value), ierr)
    name = f_str(p)
  end subroutine

end module rewind
