! Rewind's Fortran API: the module `rewind`, over the C API (api/include/rewind/rewind.h,
! whose comments are the reference for what each call does). Fortran 2008 + ISO_C_BINDING.
!
!   use rewind
!   type(c_ptr) :: cfg, grids, file
!   rc = rewind_config_create(cfg)
!   rc = rewind_config_set_geometry(cfg, 3, [16, 16, 16], 2, [0d0, 1d0, 0d0, 1d0, 0d0, 1d0])
!   rc = rewind_config_add_variable(cfg, 'T', 'K')
!   rc = rewind_grids_create(grids, 1)
!   rc = rewind_grids_add(grids, uid, level, key, bbox, parent, children, index)
!   rc = rewind_grids_set_field(grids, index, 0, t)      ! t: real(8), target, contiguous
!   rc = rewind_file_create(file, MPI_COMM_WORLD, 'run.h5', cfg)
!   rc = rewind_file_write(file, step, time, dt, REWIND_CHECKPOINT, grids)
!   rc = rewind_file_close(file)
!
! Every function returns an integer status (REWIND_OK = 0); rewind_last_error() is the
! message of the last failure. Communicators are the integer handles of `use mpi` (for
! mpi_f08, pass comm%MPI_VAL). Arrays handed to rewind_grids_set_field must be
! contiguous and keep their address until the write (TARGET or POINTER, not a temporary):
! the library reads them during rewind_file_write. Arrays are (x, y, z) with the ghost
! layers included, x fastest, as the C API's (z, y, x). UIDs are 64-bit integers (the C
! API's unsigned bits); REWIND_NO_UID (-1) is "no parent".
module rewind
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer, parameter, public :: REWIND_API_VERSION = 1
  integer, parameter, public :: REWIND_OK = 0, REWIND_ERR_ARGUMENT = 1, REWIND_ERR_NOT_FOUND = 2, &
                                REWIND_ERR_FORMAT = 3, REWIND_ERR_NO_SUCH_STEP = 4, REWIND_ERR_CORRUPT = 5, &
                                REWIND_ERR_IO = 6, REWIND_ERR_STATE = 7, REWIND_ERR_VERSION = 8, &
                                REWIND_ERR_EXISTS = 9, REWIND_ERR_INTERNAL = 99
  integer, parameter, public :: REWIND_VISUALISATION = 0, REWIND_CHECKPOINT = 1
  integer, parameter, public :: REWIND_ERR_CLAIMED = 10, REWIND_ERR_NETWORK = 11
  integer, parameter, public :: REWIND_COLLECTOR_THREAD = 0, REWIND_COLLECTOR_RANK = 1
  integer, parameter, public :: REWIND_EVENT_SET = 1, REWIND_EVENT_STOP = 2, REWIND_EVENT_BRANCH = 3
  integer(c_int64_t), parameter, public :: REWIND_NO_UID = -1_c_int64_t

  !> One step of a file (the C API's rewind_step_entry).
  type, bind(c), public :: rewind_step_entry
    integer(c_int64_t) :: step = -1
    real(c_double) :: time = 0, dt = 0
    integer(c_int32_t) :: kind = 0, committed = 0
    integer(c_int64_t) :: n_grids = 0
    integer(c_int32_t) :: n_levels = 0
  end type

  !> The tree of a step, as Fortran arrays over the reader's memory (valid until the
  !> reader's next topology call or close). Rows are 1-based here: row r of the file is
  !> index r + 1; parent_row / child_rows hold the file's 0-based rows (-1 = none).
  type, public :: rewind_tree
    integer(c_int64_t) :: n_grids = 0
    integer :: max_children = 0, n_levels = 0
    integer(c_int64_t), pointer :: uid(:) => null(), sort_key(:) => null(), parent_uid(:) => null()
    integer(c_int32_t), pointer :: level(:) => null()
    integer(c_int64_t), pointer :: parent_row(:) => null()
    integer(c_int64_t), pointer :: child_uids(:, :) => null(), child_rows(:, :) => null()  ! (max_children, n_grids)
    real(c_double), pointer :: bbox(:, :) => null()                                       ! (6, n_grids)
    integer(c_int64_t), pointer :: level_offsets(:) => null()                             ! (n_levels + 1)
  end type

  !> What a live boundary hands back (rewind_live_next_event): the C API's rewind_event
  !> with Fortran strings.
  type, public :: rewind_event
    integer :: kind = 0                      ! REWIND_EVENT_SET, _STOP or _BRANCH
    character(len=:), allocatable :: name    ! SET: the parameter
    integer :: n = 0                         ! SET: components of value
    real(c_double) :: value(3) = 0           ! SET: the new value
    character(len=:), allocatable :: parent  ! BRANCH: the file to reload from
    integer(c_int64_t) :: step = 0           ! BRANCH: its step
    real(c_double) :: time = 0               ! BRANCH: that step's time
    character(len=:), allocatable :: file    ! BRANCH: the branch file now written
  end type

  type, bind(c) :: c_event
    integer(c_int32_t) :: kind, n
    type(c_ptr) :: name
    real(c_double) :: value(3)
    type(c_ptr) :: parent
    integer(c_int64_t) :: step
    real(c_double) :: time
    type(c_ptr) :: file
  end type

  type, bind(c) :: c_topology
    integer(c_int64_t) :: n_grids
    integer(c_int32_t) :: max_children, n_levels
    type(c_ptr) :: uid, sort_key, level, parent_uid, parent_row, child_uids, child_rows, bbox, level_offsets
  end type

  public :: rewind_last_error, rewind_library_version
  public :: rewind_config_create, rewind_config_free, rewind_config_set_geometry, rewind_config_add_variable, &
            rewind_config_set_option, rewind_config_set_text, rewind_config_set_constant
  public :: rewind_grids_create, rewind_grids_free, rewind_grids_clear, rewind_grids_add, rewind_grids_set_field, &
            rewind_grids_set_cell_type
  public :: rewind_file_create, rewind_file_create_branch, rewind_file_append, rewind_file_write, &
            rewind_file_last_step, rewind_file_close
  public :: rewind_live_start, rewind_live_port, rewind_live_declare, rewind_live_boundary, rewind_live_next_event, &
            rewind_live_finish
  public :: rewind_reader_open, rewind_reader_close, rewind_reader_step_count, rewind_reader_step_at, &
            rewind_reader_find_step, rewind_reader_topology, rewind_reader_partition, rewind_reader_read, &
            rewind_reader_lineage

  !> rewind_grids_set_field for arrays of rank 1 to 4 (a grid's padded block, or a slab).
  interface rewind_grids_set_field
    module procedure set_field_1, set_field_2, set_field_3, set_field_4
  end interface

  interface
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
    integer(c_int64_t) function c_file_last_step(file) bind(c, name='rewind_file_last_step')
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: file
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
    integer(c_int) function c_live_port(live) bind(c, name='rewind_live_port')
      import :: c_ptr, c_int
      type(c_ptr), value :: live
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
    integer(c_int) function c_live_next_event(live, event) bind(c, name='rewind_live_next_event')
      import :: c_ptr, c_int, c_event
      type(c_ptr), value :: live
      type(c_event), intent(out) :: event
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

contains

  ! --- strings ----------------------------------------------------------------------

  function c_str(s) result(out)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=:), allocatable :: out
    out = trim(s)//c_null_char
  end function

  function f_str(p) result(out)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: out
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
      out = ''
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: out)
    do i = 1, n
      out(i:i) = chars(i)
    end do
  end function

  !> The message of the last failed call on this thread ('' if none).
  function rewind_last_error() result(msg)
    character(len=:), allocatable :: msg
    msg = f_str(c_last_error())
  end function

  function rewind_library_version() result(v)
    character(len=:), allocatable :: v
    v = f_str(c_library_version())
  end function

  ! --- config -------------------------------------------------------------------------

  integer function rewind_config_create(cfg)
    type(c_ptr), intent(out) :: cfg
    rewind_config_create = c_config_create(cfg, REWIND_API_VERSION)
  end function

  integer function rewind_config_free(cfg)
    type(c_ptr), intent(in) :: cfg
    rewind_config_free = c_config_free(cfg)
  end function

  integer function rewind_config_set_geometry(cfg, dim, cells, refinement, domain)
    type(c_ptr), intent(in) :: cfg
    integer, intent(in) :: dim, cells(3), refinement
    real(c_double), intent(in) :: domain(6)
    rewind_config_set_geometry = c_config_set_geometry(cfg, int(dim, c_int), int(cells, c_int), &
                                                       int(refinement, c_int), domain)
  end function

  integer function rewind_config_add_variable(cfg, name, unit)
    type(c_ptr), intent(in) :: cfg
    character(len=*), intent(in) :: name, unit
    rewind_config_add_variable = c_config_add_variable(cfg, c_str(name), c_str(unit))
  end function

  integer function rewind_config_set_option(cfg, name, value)
    type(c_ptr), intent(in) :: cfg
    character(len=*), intent(in) :: name, value
    rewind_config_set_option = c_config_set_option(cfg, c_str(name), c_str(value))
  end function

  integer function rewind_config_set_text(cfg, key, value)
    type(c_ptr), intent(in) :: cfg
    character(len=*), intent(in) :: key, value
    rewind_config_set_text = c_config_set_text(cfg, c_str(key), c_str(value))
  end function

  integer function rewind_config_set_constant(cfg, group, name, value)
    type(c_ptr), intent(in) :: cfg
    character(len=*), intent(in) :: group, name
    real(c_double), intent(in) :: value
    rewind_config_set_constant = c_config_set_constant(cfg, c_str(group), c_str(name), value)
  end function

  ! --- grids -------------------------------------------------------------------------

  integer function rewind_grids_create(grids, halo)
    type(c_ptr), intent(out) :: grids
    integer, intent(in) :: halo
    rewind_grids_create = c_grids_create(grids, int(halo, c_int), REWIND_API_VERSION)
  end function

  integer function rewind_grids_free(grids)
    type(c_ptr), intent(in) :: grids
    rewind_grids_free = c_grids_free(grids)
  end function

  integer function rewind_grids_clear(grids)
    type(c_ptr), intent(in) :: grids
    rewind_grids_clear = c_grids_clear(grids)
  end function

  !> Adds a grid of this rank; `index` receives its index (0-based, for set_field).
  integer function rewind_grids_add(grids, uid, level, sort_key, bbox, parent_uid, child_uids, index)
    type(c_ptr), intent(in) :: grids
    integer(c_int64_t), intent(in) :: uid, sort_key, parent_uid
    integer, intent(in) :: level
    real(c_double), intent(in) :: bbox(6)
    integer(c_int64_t), intent(in) :: child_uids(:)
    integer(c_int64_t), intent(out) :: index
    integer(c_int64_t) :: none(1)
    if (size(child_uids) > 0) then
      rewind_grids_add = c_grids_add(grids, uid, int(level, c_int), sort_key, bbox, parent_uid, &
                                     int(size(child_uids), c_int), child_uids, index)
    else
      none = 0
      rewind_grids_add = c_grids_add(grids, uid, int(level, c_int), sort_key, bbox, parent_uid, 0_c_int, none, index)
    end if
  end function

  integer function set_field_1(grids, index, slot, data)
    type(c_ptr), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer, intent(in) :: slot
    real(c_double), intent(in), target, contiguous :: data(:)
    set_field_1 = c_grids_set_field(grids, index, int(slot, c_int), c_loc(data))
  end function

  integer function set_field_2(grids, index, slot, data)
    type(c_ptr), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer, intent(in) :: slot
    real(c_double), intent(in), target, contiguous :: data(:, :)
    set_field_2 = c_grids_set_field(grids, index, int(slot, c_int), c_loc(data))
  end function

  integer function set_field_3(grids, index, slot, data)
    type(c_ptr), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer, intent(in) :: slot
    real(c_double), intent(in), target, contiguous :: data(:, :, :)
    set_field_3 = c_grids_set_field(grids, index, int(slot, c_int), c_loc(data))
  end function

  integer function set_field_4(grids, index, slot, data)
    type(c_ptr), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer, intent(in) :: slot
    real(c_double), intent(in), target, contiguous :: data(:, :, :, :)
    set_field_4 = c_grids_set_field(grids, index, int(slot, c_int), c_loc(data))
  end function

  integer function rewind_grids_set_cell_type(grids, index, types)
    type(c_ptr), intent(in) :: grids
    integer(c_int64_t), intent(in) :: index
    integer(c_int8_t), intent(in), target, contiguous :: types(:, :, :)
    rewind_grids_set_cell_type = c_grids_set_cell_type(grids, index, c_loc(types))
  end function

  ! --- file (written) ---------------------------------------------------------------

  integer function rewind_file_create(file, comm, path, cfg)
    type(c_ptr), intent(out) :: file
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path
    type(c_ptr), intent(in) :: cfg
    rewind_file_create = c_file_create(file, int(comm, c_int), c_str(path), cfg)
  end function

  !> A branch of `parent`'s step `parent_step`, recording `changes` ("key=value" each).
  integer function rewind_file_create_branch(file, comm, path, parent, parent_step, changes, cfg)
    type(c_ptr), intent(out) :: file
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path, parent
    integer(c_int64_t), intent(in) :: parent_step
    character(len=*), intent(in) :: changes(:)
    type(c_ptr), intent(in) :: cfg
    character(kind=c_char, len=len(changes) + 1), allocatable, target :: buf(:)
    type(c_ptr), allocatable :: ptrs(:)
    integer :: i
    allocate (buf(max(size(changes), 1)), ptrs(max(size(changes), 1)))
    do i = 1, size(changes)
      buf(i) = trim(changes(i))//c_null_char
      ptrs(i) = c_loc(buf(i))
    end do
    if (size(changes) == 0) ptrs(1) = c_null_ptr
    rewind_file_create_branch = c_file_create_branch(file, int(comm, c_int), c_str(path), c_str(parent), &
                                                     parent_step, int(size(changes), c_int), ptrs, cfg)
  end function

  integer function rewind_file_append(file, comm, path, cfg)
    type(c_ptr), intent(out) :: file
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path
    type(c_ptr), intent(in) :: cfg
    rewind_file_append = c_file_append(file, int(comm, c_int), c_str(path), cfg)
  end function

  !> Writes a step; `vars` (0-based slots) picks a visualisation step's variables (all if
  !> absent), `float32` stores them in single precision.
  integer function rewind_file_write(file, step, time, dt, kind, grids, vars, float32)
    type(c_ptr), intent(in) :: file, grids
    integer(c_int64_t), intent(in) :: step
    real(c_double), intent(in) :: time, dt
    integer, intent(in) :: kind
    integer, intent(in), optional :: vars(:)
    logical, intent(in), optional :: float32
    integer(c_int) :: f32, none(1)
    f32 = 0
    if (present(float32)) then
      if (float32) f32 = 1
    end if
    none = 0
    if (present(vars)) then
      rewind_file_write = c_file_write(file, step, time, dt, int(kind, c_int), grids, int(size(vars), c_int), &
                                       int(vars, c_int), f32)
    else
      rewind_file_write = c_file_write(file, step, time, dt, int(kind, c_int), grids, 0_c_int, none, f32)
    end if
  end function

  integer(c_int64_t) function rewind_file_last_step(file)
    type(c_ptr), intent(in) :: file
    rewind_file_last_step = c_file_last_step(file)
  end function

  integer function rewind_file_close(file)
    type(c_ptr), intent(inout) :: file
    rewind_file_close = c_file_close(file)
    file = c_null_ptr
  end function

  ! --- reader --------------------------------------------------------------------------

  !> comm: a communicator for collective reads, or MPI_COMM_NULL for a serial reader.
  integer function rewind_reader_open(reader, comm, path)
    type(c_ptr), intent(out) :: reader
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path
    rewind_reader_open = c_reader_open(reader, int(comm, c_int), c_str(path))
  end function

  integer function rewind_reader_close(reader)
    type(c_ptr), intent(inout) :: reader
    rewind_reader_close = c_reader_close(reader)
    reader = c_null_ptr
  end function

  integer function rewind_reader_step_count(reader, n)
    type(c_ptr), intent(in) :: reader
    integer(c_int64_t), intent(out) :: n
    rewind_reader_step_count = c_reader_step_count(reader, n)
  end function

  !> The i-th committed step, 0-based (-1: the last).
  integer function rewind_reader_step_at(reader, i, entry)
    type(c_ptr), intent(in) :: reader
    integer(c_int64_t), intent(in) :: i
    type(rewind_step_entry), intent(out) :: entry
    rewind_reader_step_at = c_reader_step_at(reader, i, entry)
  end function

  integer function rewind_reader_find_step(reader, selector, entry)
    type(c_ptr), intent(in) :: reader
    character(len=*), intent(in) :: selector
    type(rewind_step_entry), intent(out) :: entry
    rewind_reader_find_step = c_reader_find_step(reader, c_str(selector), entry)
  end function

  integer function rewind_reader_topology(reader, step, tree)
    type(c_ptr), intent(in) :: reader
    integer(c_int64_t), intent(in) :: step
    type(rewind_tree), intent(out) :: tree
    type(c_topology) :: t
    integer(c_int64_t) :: n
    integer :: mc
    rewind_reader_topology = c_reader_topology(reader, step, t)
    if (rewind_reader_topology /= REWIND_OK) return
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
  end function

  !> The file's 0-based rows `rank` of `nranks` takes for a restart (reader memory,
  !> valid until its next partition call).
  integer function rewind_reader_partition(reader, step, rank, nranks, rows)
    type(c_ptr), intent(in) :: reader
    integer(c_int64_t), intent(in) :: step
    integer, intent(in) :: rank, nranks
    integer(c_int64_t), pointer, intent(out) :: rows(:)
    integer(c_int64_t) :: n
    type(c_ptr) :: p
    rewind_reader_partition = c_reader_partition(reader, step, int(rank, c_int), int(nranks, c_int), n, p)
    if (rewind_reader_partition /= REWIND_OK) then
      rows => null()
      return
    end if
    call c_f_pointer(p, rows, [n])
  end function

  !> Variable `name` of the 0-based `rows` into `out` (size(rows) * cells values, interior
  !> only, row after row, x fastest). Collective for a collective reader.
  integer function rewind_reader_read(reader, step, name, rows, out)
    type(c_ptr), intent(in) :: reader
    integer(c_int64_t), intent(in) :: step
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: rows(:)
    real(c_double), intent(out), contiguous :: out(:)
    integer(c_int64_t) :: none(1)
    none = 0
    if (size(rows) > 0) then
      rewind_reader_read = c_reader_read(reader, step, c_str(name), int(size(rows), c_int64_t), rows, out)
    else
      rewind_reader_read = c_reader_read(reader, step, c_str(name), 0_c_int64_t, none, out)
    end if
  end function

  integer function rewind_reader_lineage(reader, parent_file, parent_step, parent_time)
    type(c_ptr), intent(in) :: reader
    character(len=:), allocatable, intent(out) :: parent_file
    integer(c_int64_t), intent(out) :: parent_step
    real(c_double), intent(out) :: parent_time
    type(c_ptr) :: p
    rewind_reader_lineage = c_reader_lineage(reader, p, parent_step, parent_time)
    parent_file = f_str(p)
  end function

  ! --- live windows and steering ------------------------------------------------------

  !> Starts the live service (rewind.h: rewind_live_start). `where`: REWIND_COLLECTOR_THREAD
  !> or REWIND_COLLECTOR_RANK; `token`: '' for none; `compute`: the communicator to compute
  !> on; `is_compute`: .false. on the collector's rank (the call returns at the run's end).
  integer function rewind_live_start(live, world, where, listen, token, cfg, compute, is_compute)
    type(c_ptr), intent(out) :: live
    integer, intent(in) :: world, where
    character(len=*), intent(in) :: listen, token
    type(c_ptr), intent(in) :: cfg
    integer, intent(out) :: compute
    logical, intent(out) :: is_compute
    integer(c_int) :: c, ic
    rewind_live_start = c_live_start(live, int(world, c_int), int(where, c_int), c_str(listen), c_str(token), cfg, c, ic)
    compute = int(c)
    is_compute = ic /= 0
  end function

  integer function rewind_live_port(live)
    type(c_ptr), intent(in) :: live
    rewind_live_port = int(c_live_port(live))
  end function

  !> A steerable parameter of 1 or 3 components (size(value)) in [min, max].
  integer function rewind_live_declare(live, name, unit, min, max, value, description)
    type(c_ptr), intent(in) :: live
    character(len=*), intent(in) :: name, unit, description
    real(c_double), intent(in) :: min, max, value(:)
    rewind_live_declare = c_live_declare(live, c_str(name), c_str(unit), min, max, int(size(value), c_int), value, &
                                         c_str(description))
  end function

  !> A step boundary (collective); `file` may be c_null_ptr.
  integer function rewind_live_boundary(live, step, time, grids, file)
    type(c_ptr), intent(in) :: live, grids, file
    integer(c_int64_t), intent(in) :: step
    real(c_double), intent(in) :: time
    rewind_live_boundary = c_live_boundary(live, step, time, grids, file)
  end function

  !> The next event of the last boundary: .true. and `event` set, or .false. when none is left.
  logical function rewind_live_next_event(live, event)
    type(c_ptr), intent(in) :: live
    type(rewind_event), intent(out) :: event
    type(c_event) :: e
    rewind_live_next_event = c_live_next_event(live, e) == 1
    if (.not. rewind_live_next_event) return
    event%kind = int(e%kind)
    event%n = int(e%n)
    event%name = f_str(e%name)
    event%value = e%value
    event%parent = f_str(e%parent)
    event%step = e%step
    event%time = e%time
    event%file = f_str(e%file)
  end function

  integer function rewind_live_finish(live)
    type(c_ptr), intent(inout) :: live
    rewind_live_finish = c_live_finish(live)
    live = c_null_ptr
  end function

end module rewind
