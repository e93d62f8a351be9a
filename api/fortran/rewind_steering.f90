! The module `rewind`'s live calls (rewind.h: live windows and steering), re-exported by
! `use rewind` (rewind.f90). Not used by codes directly.
module rewind_steering
  use, intrinsic :: iso_c_binding
  use rewind_c
  use rewind_base
  implicit none
  private
  public :: rewind_live_start, rewind_live_port, rewind_live_declare, rewind_live_boundary, rewind_live_next_event, &
            rewind_live_finish, rewind_live_allow_futures

contains

  ! --- live windows and steering ------------------------------------------------------

  !> Starts the live service (rewind.h: rewind_live_start). `where`: REWIND_COLLECTOR_THREAD
  !> or REWIND_COLLECTOR_RANK; `token`: '' for the default (REWIND_TOKEN, REWIND_TOKEN_FILE,
  !> else a generated one the listening process prints); `compute`: the communicator to compute
  !> on; `is_compute`: .false. on the collector's rank (the call returns at the run's end).
  subroutine rewind_live_start(live, world, where, listen, token, cfg, compute, is_compute, ierr)
    type(rewind_live), intent(out) :: live
    integer, intent(in) :: world, where
    character(len=*), intent(in) :: listen, token
    type(rewind_config), intent(in) :: cfg
    integer, intent(out) :: compute
    logical, intent(out) :: is_compute
    integer, intent(out), optional :: ierr
    integer(c_int) :: c, ic, rc
    rc = c_live_start(live%p, int(world, c_int), int(where, c_int), c_str(listen), c_str(token), cfg%p, c, ic)
    compute = int(c)
    is_compute = ic /= 0
    call done(rc, ierr)
  end subroutine

  !> The port clients connect to (on the process that listens; 0 elsewhere).
  subroutine rewind_live_port(live, port, ierr)
    type(rewind_live), intent(in) :: live
    integer, intent(out) :: port
    integer, intent(out), optional :: ierr
    integer(c_int) :: p
    p = 0
    call done(c_live_port(live%p, p), ierr)
    port = int(p)
  end subroutine

  !> A steerable parameter of 1 or 3 components (size(value)) in [min, max].
  !> How many futures one fork may start on this code (default 1): a code that computes
  !> on its BRANCH event's comm allows more (rewind.h: rewind_live_allow_futures).
  subroutine rewind_live_allow_futures(live, max_futures, ierr)
    type(rewind_live), intent(in) :: live
    integer, intent(in) :: max_futures
    integer, intent(out), optional :: ierr
    call done(c_live_allow_futures(live%p, int(max_futures, c_int)), ierr)
  end subroutine

  subroutine rewind_live_declare(live, name, unit, min, max, value, description, ierr)
    type(rewind_live), intent(in) :: live
    character(len=*), intent(in) :: name, unit, description
    real(c_double), intent(in) :: min, max, value(:)
    integer, intent(out), optional :: ierr
    call done(c_live_declare(live%p, c_str(name), c_str(unit), min, max, int(size(value), c_int), value, &
                             c_str(description)), ierr)
  end subroutine

  !> A step boundary (collective); `file` absent: no file is being written.
  subroutine rewind_live_boundary(live, step, time, grids, file, ierr)
    type(rewind_live), intent(in) :: live
    integer(c_int64_t), intent(in) :: step
    real(c_double), intent(in) :: time
    type(rewind_grids), intent(in) :: grids
    type(rewind_file), intent(in), optional :: file
    integer, intent(out), optional :: ierr
    type(c_ptr) :: f
    f = c_null_ptr
    if (present(file)) f = file%p
    call done(c_live_boundary(live%p, step, time, grids%p, f), ierr)
  end subroutine

  !> The next event of the last boundary: `has_event` .true. and `event` set, or .false.
  !> when none is left; an error (a kernel-only build) leaves has_event .false. too.
  subroutine rewind_live_next_event(live, event, has_event, ierr)
    type(rewind_live), intent(in) :: live
    type(rewind_event), intent(out) :: event
    logical, intent(out) :: has_event
    integer, intent(out), optional :: ierr
    type(c_event) :: e
    integer(c_int) :: has, rc, comm
    has = 0
    rc = c_live_next_event(live%p, e, has)
    has_event = rc == REWIND_OK .and. has == 1
    call done(rc, ierr)
    if (.not. has_event) return
    event%kind = int(e%kind)
    event%n = int(e%n)
    event%name = f_str(e%name)
    event%value = e%value
    event%parent = f_str(e%parent)
    event%step = e%step
    event%time = e%time
    event%file = f_str(e%file)
    event%future = int(e%future)
    event%futures = int(e%futures)
    event%changes = f_str(e%changes)
    event%comm = 0
    if (event%kind == REWIND_EVENT_BRANCH) then
      rc = c_live_event_comm(live%p, comm)
      event%comm = int(comm)
    end if
  end subroutine

  subroutine rewind_live_finish(live, ierr)
    type(rewind_live), intent(inout) :: live
    integer, intent(out), optional :: ierr
    call closed(c_live_finish(live%p), live%p, ierr)
  end subroutine

end module rewind_steering
