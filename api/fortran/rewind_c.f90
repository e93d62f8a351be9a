! The C API's declarations for Fortran (ISO_C_BINDING), used by the module `rewind`
! (rewind.f90), which is what codes use: these take C pointers and C strings as they are.
module rewind_c
  use, intrinsic :: iso_c_binding
  implicit none
  public

  !> One step of a file (the C API's rewind_step_entry).
  type, bind(c), public :: rewind_step_entry
    integer(c_int64_t) :: step = -1
    real(c_double) :: time = 0, dt = 0
    integer(c_int32_t) :: kind = 0, committed = 0
    integer(c_int64_t) :: n_grids = 0
    integer(c_int32_t) :: n_levels = 0
  end type

  type, bind(c), public :: c_event
    integer(c_int32_t) :: kind, n
    type(c_ptr) :: name
    real(c_double) :: value(3)
    type(c_ptr) :: parent
    integer(c_int64_t) :: step
    real(c_double) :: time
    type(c_ptr) :: file
    integer(c_int32_t) :: future, futures
    type(c_ptr) :: changes
    type(c_ptr) :: comm  ! MPI_Comm (a pointer or an int): read through c_live_event_comm
  end type

  type, bind(c), public :: c_topology
    integer(c_int64_t) :: n_grids
    integer(c_int32_t) :: max_children, n_levels
    type(c_ptr) :: uid, sort_key, level, parent_uid, parent_row, child_uids, child_rows, bbox, level_offsets
  end type

  interface
    integer(c_int) function c_api_version() bind(c, name='rewind_api_version')
      import :: c_int
    end function
    integer(c_int) function c_grids_count(grids, n) bind(c, name='rewind_grids_count')
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: grids
      integer(c_int64_t), intent(out) :: n
    end function
    integer(c_int) function c_file_set_scalar(file, name, value) bind(c, name='rewind_file_set_scalar')
      import :: c_ptr, c_int, c_char, c_double
      type(c_ptr), value :: file
      character(kind=c_char), intent(in) :: name(*)
      real(c_double), value :: value
    end function
    integer(c_int) function c_reader_scalar_count(reader, step, n) bind(c, name='rewind_reader_scalar_count')
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: reader
      integer(c_int64_t), value :: step
      integer(c_int), intent(out) :: n
    end function
    integer(c_int) function c_reader_scalar(reader, step, i, name, value) bind(c, name='rewind_reader_scalar')
      import :: c_ptr, c_int, c_int64_t, c_double
      type(c_ptr), value :: reader
      integer(c_int64_t), value :: step
      integer(c_int), value :: i
      type(c_ptr), intent(out) :: name
      real(c_double), intent(out) :: value
    end function
    integer(c_int) function c_reader_variable_count(reader, n) bind(c, name='rewind_reader_variable_count')
      import :: c_ptr, c_int
      type(c_ptr), value :: reader
      integer(c_int), intent(out) :: n
    end function
    integer(c_int) function c_reader_variable(reader, i, name, unit) bind(c, name='rewind_reader_variable')
      import :: c_ptr, c_int
      type(c_ptr), value :: reader
      integer(c_int), value :: i
      type(c_ptr), intent(out) :: name, unit
    end function
    integer(c_int) function c_reader_read_into(reader, step, name, n_rows, rows, dest, halo) &
        bind(c, name='rewind_reader_read_into')
      import :: c_ptr, c_int, c_int64_t, c_char
      type(c_ptr), value :: reader
      integer(c_int64_t), value :: step, n_rows
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), intent(in) :: rows(*)
      type(c_ptr), intent(in) :: dest(*)
      integer(c_int), value :: halo
    end function
    function c_last_error() bind(c, name='rewind_last_error')
      import :: c_ptr
      type(c_ptr) :: c_last_error
    end function
    function c_library_version() bind(c, name='rewind_library_version')
      import :: c_ptr
      type(c_ptr) :: c_library_version
    end function
    integer(c_int) function c_config_create(cfg, version) bind(c, name='rewind_config_create_v')
      import :: c_ptr, c_int
      type(c_ptr), intent(out) :: cfg
      integer(c_int), value :: version
    end function
    integer(c_int) function c_config_free(cfg) bind(c, name='rewind_config_free')
      import :: c_ptr, c_int
      type(c_ptr), value :: cfg
    end function
    integer(c_int) function c_config_set_geometry(cfg, dim, cells, refinement, domain) &
        bind(c, name='rewind_config_set_geometry')
      import :: c_ptr, c_int, c_double
      type(c_ptr), value :: cfg
      integer(c_int), value :: dim, refinement
      integer(c_int), intent(in) :: cells(3)
      real(c_double), intent(in) :: domain(6)
    end function
    integer(c_int) function c_config_add_variable(cfg, name, unit) bind(c, name='rewind_config_add_variable')
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: cfg
      character(kind=c_char), intent(in) :: name(*), unit(*)
    end function
    integer(c_int) function c_config_set_option(cfg, name, value) bind(c, name='rewind_config_set_option')
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: cfg
      character(kind=c_char), intent(in) :: name(*), value(*)
    end function
    integer(c_int) function c_config_set_text(cfg, key, value) bind(c, name='rewind_config_set_text')
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: cfg
      character(kind=c_char), intent(in) :: key(*), value(*)
    end function
    integer(c_int) function c_config_set_constant(cfg, group, name, value) bind(c, name='rewind_config_set_constant')
      import :: c_ptr, c_int, c_char, c_double
      type(c_ptr), value :: cfg
      character(kind=c_char), intent(in) :: group(*), name(*)
      real(c_double), value :: value
    end function
    integer(c_int) function c_grids_create(grids, halo, version) bind(c, name='rewind_grids_create_v')
      import :: c_ptr, c_int
      type(c_ptr), intent(out) :: grids
      integer(c_int), value :: halo, version
    end function
    integer(c_int) function c_grids_free(grids) bind(c, name='rewind_grids_free')
      import :: c_ptr, c_int
      type(c_ptr), value :: grids
    end function
    integer(c_int) function c_grids_clear(grids) bind(c, name='rewind_grids_clear')
      import :: c_ptr, c_int
      type(c_ptr), value :: grids
    end function
    integer(c_int) function c_grids_add(grids, uid, level, sort_key, bbox, parent_uid, n_children, child_uids, index) &
        bind(c, name='rewind_grids_add')
      import :: c_ptr, c_int, c_int64_t, c_double
      type(c_ptr), value :: grids
      integer(c_int64_t), value :: uid, sort_key, parent_uid
      integer(c_int), value :: level, n_children
      real(c_double), intent(in) :: bbox(6)
      integer(c_int64_t), intent(in) :: child_uids(*)
      integer(c_int64_t), intent(out) :: index
    end function
    integer(c_int) function c_grids_set_field(grids, index, slot, data) bind(c, name='rewind_grids_set_field')
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: grids, data
      integer(c_int64_t), value :: index
      integer(c_int), value :: slot
    end function
    integer(c_int) function c_grids_set_field_float(grids, index, slot, data) &
        bind(c, name='rewind_grids_set_field_float')
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: grids, data
      integer(c_int64_t), value :: index
      integer(c_int), value :: slot
    end function
    integer(c_int) function c_grids_set_cell_type(grids, index, types) bind(c, name='rewind_grids_set_cell_type')
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: grids, types
      integer(c_int64_t), value :: index
    end function
    integer(c_int) function c_file_create(file, comm, path, cfg) bind(c, name='rewind_file_create_f')
      import :: c_ptr, c_int, c_char
      type(c_ptr), intent(out) :: file
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), value :: cfg
    end function
    integer(c_int) function c_file_create_branch(file, comm, path, parent, parent_step, n_changes, changes, cfg) &
        bind(c, name='rewind_file_create_branch_f')
      import :: c_ptr, c_int, c_char, c_int64_t
      type(c_ptr), intent(out) :: file
      integer(c_int), value :: comm, n_changes
      character(kind=c_char), intent(in) :: path(*), parent(*)
      integer(c_int64_t), value :: parent_step
      type(c_ptr), intent(in) :: changes(*)
      type(c_ptr), value :: cfg
    end function
    integer(c_int) function c_file_append(file, comm, path, cfg) bind(c, name='rewind_file_append_f')
      import :: c_ptr, c_int, c_char
      type(c_ptr), intent(out) :: file
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), value :: cfg
    end function
    integer(c_int) function c_file_write(file, step, time, dt, kind, grids, n_vars, vars, float32) &
        bind(c, name='rewind_file_write')
      import :: c_ptr, c_int, c_int64_t, c_double
      type(c_ptr), value :: file, grids
      integer(c_int64_t), value :: step
      real(c_double), value :: time, dt
      integer(c_int), value :: kind, n_vars, float32
      integer(c_int), intent(in) :: vars(*)
    end function
    integer(c_int) function c_file_last_step(file, step) bind(c, name='rewind_file_last_step')
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: file
      integer(c_int64_t), intent(out) :: step
    end function
    integer(c_int) function c_file_close(file) bind(c, name='rewind_file_close')
      import :: c_ptr, c_int
      type(c_ptr), value :: file
    end function
    integer(c_int) function c_reader_open(reader, comm, path) bind(c, name='rewind_reader_open_f')
      import :: c_ptr, c_int, c_char
      type(c_ptr), intent(out) :: reader
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: path(*)
    end function
    integer(c_int) function c_reader_close(reader) bind(c, name='rewind_reader_close')
      import :: c_ptr, c_int
      type(c_ptr), value :: reader
    end function
    integer(c_int) function c_reader_step_count(reader, n) bind(c, name='rewind_reader_step_count')
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: reader
      integer(c_int64_t), intent(out) :: n
    end function
    integer(c_int) function c_reader_step_at(reader, i, entry) bind(c, name='rewind_reader_step_at')
      import :: c_ptr, c_int, c_int64_t, rewind_step_entry
      type(c_ptr), value :: reader
      integer(c_int64_t), value :: i
      type(rewind_step_entry), intent(out) :: entry
    end function
    integer(c_int) function c_reader_find_step(reader, selector, entry) bind(c, name='rewind_reader_find_step')
      import :: c_ptr, c_int, c_char, rewind_step_entry
      type(c_ptr), value :: reader
      character(kind=c_char), intent(in) :: selector(*)
      type(rewind_step_entry), intent(out) :: entry
    end function
    integer(c_int) function c_reader_find_checkpoint(reader, selector, entry, note) &
        bind(c, name='rewind_reader_find_checkpoint')
      import :: c_ptr, c_int, c_char, rewind_step_entry
      type(c_ptr), value :: reader
      character(kind=c_char), intent(in) :: selector(*)
      type(rewind_step_entry), intent(out) :: entry
      type(c_ptr), intent(out) :: note
    end function
    integer(c_int) function c_reader_topology(reader, step, topo) bind(c, name='rewind_reader_topology')
      import :: c_ptr, c_int, c_int64_t, c_topology
      type(c_ptr), value :: reader
      integer(c_int64_t), value :: step
      type(c_topology), intent(out) :: topo
    end function
    integer(c_int) function c_reader_partition(reader, step, rank, nranks, n_rows, rows) &
        bind(c, name='rewind_reader_partition')
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: reader
      integer(c_int64_t), value :: step
      integer(c_int), value :: rank, nranks
      integer(c_int64_t), intent(out) :: n_rows
      type(c_ptr), intent(out) :: rows
    end function
    integer(c_int) function c_reader_read(reader, step, name, n_rows, rows, out) bind(c, name='rewind_reader_read')
      import :: c_ptr, c_int, c_int64_t, c_char, c_double
      type(c_ptr), value :: reader
      integer(c_int64_t), value :: step, n_rows
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), intent(in) :: rows(*)
      real(c_double), intent(out) :: out(*)
    end function
    integer(c_int) function c_reader_lineage(reader, parent_file, parent_step, parent_time) &
        bind(c, name='rewind_reader_lineage')
      import :: c_ptr, c_int, c_int64_t, c_double
      type(c_ptr), value :: reader
      type(c_ptr), intent(out) :: parent_file
      integer(c_int64_t), intent(out) :: parent_step
      real(c_double), intent(out) :: parent_time
    end function
    integer(c_int) function c_live_start(live, world, where, listen, token, cfg, compute, is_compute) &
        bind(c, name='rewind_live_start_f')
      import :: c_ptr, c_int, c_char
      type(c_ptr), intent(out) :: live
      integer(c_int), value :: world, where
      character(kind=c_char), intent(in) :: listen(*), token(*)
      type(c_ptr), value :: cfg
      integer(c_int), intent(out) :: compute, is_compute
    end function
    integer(c_int) function c_live_allow_futures(live, max_futures) bind(c, name='rewind_live_allow_futures')
      import :: c_ptr, c_int
      type(c_ptr), value :: live
      integer(c_int), value :: max_futures
    end function
    integer(c_int) function c_live_port(live, port) bind(c, name='rewind_live_port')
      import :: c_ptr, c_int
      type(c_ptr), value :: live
      integer(c_int), intent(out) :: port
    end function
    integer(c_int) function c_live_declare(live, name, unit, min, max, n, value, description) &
        bind(c, name='rewind_live_declare')
      import :: c_ptr, c_int, c_char, c_double
      type(c_ptr), value :: live
      character(kind=c_char), intent(in) :: name(*), unit(*), description(*)
      real(c_double), value :: min, max
      integer(c_int), value :: n
      real(c_double), intent(in) :: value(*)
    end function
    integer(c_int) function c_live_boundary(live, step, time, grids, file) bind(c, name='rewind_live_boundary')
      import :: c_ptr, c_int, c_int64_t, c_double
      type(c_ptr), value :: live, grids, file
      integer(c_int64_t), value :: step
      real(c_double), value :: time
    end function
    integer(c_int) function c_live_next_event(live, event, has_event) bind(c, name='rewind_live_next_event')
      import :: c_ptr, c_int, c_event
      type(c_ptr), value :: live
      type(c_event), intent(out) :: event
      integer(c_int), intent(out) :: has_event
    end function
    integer(c_int) function c_live_event_comm(live, comm) bind(c, name='rewind_live_event_comm_f')
      import :: c_ptr, c_int
      type(c_ptr), value :: live
      integer(c_int), intent(out) :: comm
    end function
    integer(c_int) function c_live_finish(live) bind(c, name='rewind_live_finish')
      import :: c_ptr, c_int
      type(c_ptr), value :: live
    end function
    function c_strlen(s) bind(c, name='strlen')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function
  end interface

end module rewind_c
