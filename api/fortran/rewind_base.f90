! The module `rewind`'s foundations (constants, handle types, statuses and strings),
! shared by its parts: rewind.f90 (what codes `use`) and rewind_steering.f90. Not for codes.
module rewind_base
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use rewind_c
  implicit none
  public

  integer, parameter, public :: REWIND_API_VERSION = 4
  integer, parameter, public :: REWIND_OK = 0, REWIND_ERR_ARGUMENT = 1, REWIND_ERR_NOT_FOUND = 2, &
                                REWIND_ERR_FORMAT = 3, REWIND_ERR_NO_SUCH_STEP = 4, REWIND_ERR_CORRUPT = 5, &
                                REWIND_ERR_IO = 6, REWIND_ERR_STATE = 7, REWIND_ERR_VERSION = 8, &
                                REWIND_ERR_EXISTS = 9, REWIND_ERR_INTERNAL = 99
  integer, parameter, public :: REWIND_VISUALISATION = 0, REWIND_CHECKPOINT = 1
  integer, parameter, public :: REWIND_ERR_CLAIMED = 10, REWIND_ERR_NETWORK = 11
  integer, parameter, public :: REWIND_COLLECTOR_THREAD = 0, REWIND_COLLECTOR_RANK = 1
  integer, parameter, public :: REWIND_EVENT_SET = 1, REWIND_EVENT_STOP = 2, REWIND_EVENT_BRANCH = 3
  integer(c_int64_t), parameter, public :: REWIND_NO_UID = -1_c_int64_t

  !> The handles: each a distinct type around the C API's pointer `p` (null until created;
  !> as ADIOS2's, the component is visible, for a code that mixes in C calls).
  type, public :: rewind_config
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: rewind_grids
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: rewind_file
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: rewind_reader
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: rewind_live
    type(c_ptr) :: p = c_null_ptr
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
    integer :: future = 0                    ! BRANCH: which future of the fork this rank computes (0-based)
    integer :: futures = 1                   ! BRANCH: how many the fork started
    character(len=:), allocatable :: changes ! BRANCH: its changes, 'key=value;key=value'
    integer :: comm = 0                      ! BRANCH: the communicator it computes on from now on
  end type

contains

  ! --- statuses and strings ---------------------------------------------------------

  !> A call's status: into `ierr` when the caller passed it, else a failure stops the
  !> program with the message (as ADIOS2's Fortran bindings do).
  subroutine done(rc, ierr)
    integer(c_int), intent(in) :: rc
    integer, intent(out), optional :: ierr
    if (present(ierr)) then
      ierr = int(rc)
    else if (rc /= REWIND_OK) then
      write (error_unit, '(a)') 'rewind: '//rewind_last_error()
      error stop 1
    end if
  end subroutine

  !> A handle's end (close, free, finish): its pointer forgotten whatever `rc` says (the C
  !> call freed it), then the status as done() reports it.
  subroutine closed(rc, p, ierr)
    integer(c_int), intent(in) :: rc
    type(c_ptr), intent(inout) :: p
    integer, intent(out), optional :: ierr
    p = c_null_ptr
    call done(rc, ierr)
  end subroutine

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

  !> A configuration's pointer, or none (the C API's NULL: the defaults).
  type(c_ptr) function cfg_or_null(cfg)
    type(rewind_config), intent(in), optional :: cfg
    cfg_or_null = c_null_ptr
    if (present(cfg)) cfg_or_null = cfg%p
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

  !> The API version the library implements (rewind.h: rewind_api_version); this module
  !> was compiled for REWIND_API_VERSION (Fortran cannot tell the two names apart by case).
  integer function rewind_library_api_version()
    rewind_library_api_version = int(c_api_version())
  end function

end module rewind_base
