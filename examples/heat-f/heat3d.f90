! heat3d.f90 — a small 3-D heat solver on uniform blocks, adopting Rewind through its
! Fortran module: output (checkpoints and visualisation steps in one shared HDF5 file),
! restart on any number of ranks, live windows, steering of its parameters and branches
! inside the running job. Its own blocks, arrays and partition; the lines that talk to
! Rewind are marked "!R"; they pass no `ierr`, so a failed call stops the program with
! Rewind's message. Every step written carries its heat content as a named scalar.
!
!   dT/dt = kappa lap T + q exp(-|x - c|^2 / w^2),   T = 0 on the boundary of [0,1]^3
!
! 64 blocks of 8^3 cells (32^3 in all), the leaves of a full octree of depth 2 whose
! root and 8 level-1 blocks are given to Rewind without arrays (it stores their averages).
! Each rank holds a contiguous share of the blocks in Morton order; ghost cells come from
! every block's interior gathered on every rank (fine at this size; independent of the
! rank count, so runs and restarts on any number of ranks are bit-identical).
!
!   mpirun -n P heat3d OUT.h5 STEPS [--restart FILE@SEL] [--listen HOST:PORT] [--vis N] [--cp N]
program heat3d
  use mpi
  use rewind
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: s = 8, nblk = 64, nb1 = 4            ! cells per block edge, blocks, blocks per edge
  real(c_double), allocatable, target :: t(:, :, :, :)        ! (0:s+1, 0:s+1, 0:s+1, my blocks), x fastest
  real(c_double), allocatable :: all(:, :, :, :), next(:, :, :)
  integer :: rank, nranks, ierr, first, last, b, i, j, k, a, nvis, ncp
  integer(c_int64_t) :: n, steps, idx, uid(0:nblk - 1), kids(8), parent1(8)
  real(c_double) :: time, dt, kappa, q, h, x, y, z, lap
  character(len=256) :: out, restart, listen, arg, path
  type(rewind_config) :: cfg                                                             !R
  type(rewind_grids) :: grids                                                            !R
  type(rewind_file) :: file                                                              !R
  type(rewind_live) :: live                                                              !R
  type(rewind_event) :: ev                                                                !R
  logical :: stop_now, is_compute, written, has_event                                    !R
  integer :: comm, port                                                                  !R

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, out)
  call get_command_argument(2, arg)
  read (arg, *) steps
  restart = ''; listen = ''; nvis = 10; ncp = 50
  do a = 3, command_argument_count() - 1, 2
    call get_command_argument(a, arg)
    select case (trim(arg))
    case ('--restart'); call get_command_argument(a + 1, restart)
    case ('--listen'); call get_command_argument(a + 1, listen)
    case ('--vis'); call get_command_argument(a + 1, arg); read (arg, *) nvis
    case ('--cp'); call get_command_argument(a + 1, arg); read (arg, *) ncp
    end select
  end do
  kappa = 0.01d0; q = 5d0; h = 1d0 / (nb1 * s); dt = 0.15d0 * h * h; time = 0; n = 0
  first = nblk * rank / nranks; last = nblk * (rank + 1) / nranks - 1
  allocate (t(0:s + 1, 0:s + 1, 0:s + 1, first:last), all(s, s, s, 0:nblk - 1), next(s, s, s))
  t = 0
  do b = 0, nblk - 1
    uid(b) = ior(shiftl(2_c_int64_t, 58), int(b, c_int64_t))  ! level 2, Morton index b
  end do

  call rewind_config_create(cfg)                                                          !R
  call rewind_config_set_geometry(cfg, 3, [s, s, s], 2, [0d0, 1d0, 0d0, 1d0, 0d0, 1d0])   !R
  call rewind_config_add_variable(cfg, 'T', 'K')                                          !R
  call rewind_config_set_text(cfg, 'creator', 'heat3d.f90 (examples/heat-f)')             !R
  call rewind_grids_create(grids, 1)                                                      !R
  if (rank == 0) then                                                                     !R
    kids = [(ior(shiftl(1_c_int64_t, 58), int(i, c_int64_t)), i = 0, 7)]                  !R
    call rewind_grids_add(grids, 0_c_int64_t, 0, 0_c_int64_t, [0d0, 1d0, 0d0, 1d0, 0d0, 1d0], REWIND_NO_UID, kids, idx) !R
    do i = 0, 7                                                                           !R
      call box_of(1, i, x, y, z)                                                          !R
      parent1 = [(uid(8 * i + j), j = 0, 7)]                                              !R
      call rewind_grids_add(grids, kids(i + 1), 1, int(i, c_int64_t), [x, x + 0.5d0, y, y + 0.5d0, z, z + 0.5d0], &
                            0_c_int64_t, parent1, idx)                                    !R
    end do                                                                                !R
  end if                                                                                  !R
  do b = first, last
    call box_of(2, b, x, y, z)
    call rewind_grids_add(grids, uid(b), 2, int(b, c_int64_t), [x, x + 0.25d0, y, y + 0.25d0, z, z + 0.25d0], &
                          ior(shiftl(1_c_int64_t, 58), int(b / 8, c_int64_t)), [integer(c_int64_t) ::], idx) !R
    call rewind_grids_set_field(grids, idx, 0, t(:, :, :, b))                             !R
  end do

  if (len_trim(restart) > 0) then
    call reload(trim(restart), n, time)
    path = restart(1:index(restart, '@', back=.true.) - 1)
    if (index(restart, '@') == 0) path = restart
    call rewind_file_append(file, MPI_COMM_WORLD, trim(path), cfg)                 !R
  else
    call rewind_file_create(file, MPI_COMM_WORLD, trim(out), cfg)                  !R
    call set_monitors()                                                               !R
    call rewind_file_write(file, n, time, 0d0, REWIND_CHECKPOINT, grids)           !R
  end if
  if (len_trim(listen) > 0) then
    call rewind_live_start(live, MPI_COMM_WORLD, REWIND_COLLECTOR_THREAD, trim(listen), '', cfg, comm, is_compute) !R
    call rewind_live_port(live, port)                                                     !R
    if (rank == 0) write (*, '(a, i0)') 'heat3d: listening on port ', port
    flush (6)
    call rewind_live_declare(live, 'kappa', 'm^2/s', 1d-6, 1d0, [kappa], 'diffusivity')        !R
    call rewind_live_declare(live, 'q', 'K/s', 0d0, 100d0, [q], 'strength of the hot spot')    !R
  end if

  stop_now = .false.
  do while (n < steps .and. .not. stop_now)
    call advance()
    n = n + 1; time = time + dt
    written = .false.                                   ! the live link first: steering precedes output
    if (c_associated(live%p)) then                                                          !R
      call rewind_live_boundary(live, n, time, grids, file)                        !R
      do                                                                                  !R
        call rewind_live_next_event(live, ev, has_event)                                  !R
        if (.not. has_event) exit                                                         !R
        select case (ev%kind)                                                             !R
        case (REWIND_EVENT_SET)                                                           !R
          if (ev%name == 'kappa') kappa = ev%value(1)                                     !R
          if (ev%name == 'q') q = ev%value(1)                                             !R
          if (rank == 0) write (*, '(a, a, a, es12.5, a, i0)') 'heat3d: ', ev%name, ' = ', ev%value(1), ' from step ', n + 1
        case (REWIND_EVENT_BRANCH)                                                        !R
          write (arg, '(i0)') ev%step                                                     !R
          call reload(ev%parent//'@'//trim(arg), n, time)                                 !R
          call MPI_Comm_size(ev%comm, k, ierr)        ! its ranks: all of them (it allows one future)
          if (rank == 0) write (*, '(a, a, a, i0, a, i0, a, i0, a, i0, 3a)') 'heat3d: branched ', ev%file, ' from step ', &
            ev%step, ' (future ', ev%future + 1, ' of ', ev%futures, ' on ', k, ' ranks: ', ev%changes, ')'
          call set_monitors()                                                         !R
          call rewind_file_write(file, n, time, dt, REWIND_CHECKPOINT, grids)      !R
          written = .true.                              ! the branch's first step: its parent's
        case (REWIND_EVENT_STOP)                                                          !R
          stop_now = .true.                                                               !R
        end select                                                                        !R
      end do                                                                              !R
    end if                                                                                !R
    if (written) cycle
    if (stop_now .or. mod(n, int(ncp, c_int64_t)) == 0 .or. n == steps) then
      call set_monitors()                                                             !R
      call rewind_file_write(file, n, time, dt, REWIND_CHECKPOINT, grids)                      !R
    else if (mod(n, int(nvis, c_int64_t)) == 0) then
      call set_monitors()                                                             !R
      call rewind_file_write(file, n, time, dt, REWIND_VISUALISATION, grids, float32=.true.)   !R
    end if
  end do
  if (rank == 0) write (*, '(a, i0, a, es12.5, a, es12.5, a, es12.5)') 'heat3d: ', n, ' steps to t = ', time, &
                                                                       ', kappa = ', kappa, ', q = ', q
  if (c_associated(live%p)) call rewind_live_finish(live)                            !R
  call rewind_file_close(file)                                                     !R
  call rewind_grids_free(grids)                                                           !R
  call rewind_config_free(cfg)                                                            !R
  call MPI_Finalize(ierr)

contains

  ! Lower corner of block `b` (Morton index) on `level` (edge 1 / 2^level).
  subroutine box_of(level, b, x, y, z)
    integer, intent(in) :: level, b
    real(c_double), intent(out) :: x, y, z
    integer :: bit, ix, iy, iz
    ix = 0; iy = 0; iz = 0
    do bit = 0, level - 1
      ix = ior(ix, shiftl(ibits(b, 3 * bit, 1), bit))
      iy = ior(iy, shiftl(ibits(b, 3 * bit + 1, 1), bit))
      iz = ior(iz, shiftl(ibits(b, 3 * bit + 2, 1), bit))
    end do
    x = ix / dble(2**level); y = iy / dble(2**level); z = iz / dble(2**level)
  end subroutine

  ! The block holding cell (gi, gj, gk) of the 32^3 mesh, and the cell's place in it.
  integer function block_at(gi, gj, gk)
    integer, intent(in) :: gi, gj, gk
    integer :: bi, bj, bk, bit
    bi = gi / s; bj = gj / s; bk = gk / s
    block_at = 0
    do bit = 0, 1
      block_at = ior(block_at, shiftl(ibits(bi, bit, 1), 3 * bit))
      block_at = ior(block_at, shiftl(ibits(bj, bit, 1), 3 * bit + 1))
      block_at = ior(block_at, shiftl(ibits(bk, bit, 1), 3 * bit + 2))
    end do
  end function

  real(c_double) function global(gi, gj, gk, inside)
    integer, intent(in) :: gi, gj, gk
    real(c_double), intent(in) :: inside
    if (min(gi, gj, gk) < 0 .or. max(gi, gj, gk) >= nb1 * s) then
      global = -inside                         ! T = 0 on the boundary
    else
      global = all(mod(gi, s) + 1, mod(gj, s) + 1, mod(gk, s) + 1, block_at(gi, gj, gk))
    end if
  end function

  subroutine advance()
    integer :: counts(0:nranks - 1), displ(0:nranks - 1), r, gi, gj, gk
    do r = 0, nranks - 1
      counts(r) = (nblk * (r + 1) / nranks - nblk * r / nranks) * s**3
      displ(r) = (nblk * r / nranks) * s**3
    end do
    call MPI_Allgatherv(t(1:s, 1:s, 1:s, first:last), counts(rank), MPI_DOUBLE_PRECISION, all, counts, displ, &
                        MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    do b = first, last
      call box_of(2, b, x, y, z)
      do k = 0, s + 1
        do j = 0, s + 1
          do i = 0, s + 1
            if (i >= 1 .and. i <= s .and. j >= 1 .and. j <= s .and. k >= 1 .and. k <= s) cycle
            gi = nint(x / h) + i - 1; gj = nint(y / h) + j - 1; gk = nint(z / h) + k - 1
            t(i, j, k, b) = global(gi, gj, gk, t(max(1, min(s, i)), max(1, min(s, j)), max(1, min(s, k)), b))
          end do
        end do
      end do
      do k = 1, s
        do j = 1, s
          do i = 1, s
            lap = (t(i + 1, j, k, b) + t(i - 1, j, k, b) + t(i, j + 1, k, b) + t(i, j - 1, k, b) + t(i, j, k + 1, b) + &
                   t(i, j, k - 1, b) - 6 * t(i, j, k, b)) / (h * h)
            next(i, j, k) = t(i, j, k, b) + dt * (kappa * lap + q * exp(-((x + (i - 0.5d0) * h - 0.5d0)**2 + &
                            (y + (j - 0.5d0) * h - 0.5d0)**2 + (z + (k - 0.5d0) * h - 0.5d0)**2) / 0.01d0))
          end do
        end do
      end do
      t(1:s, 1:s, 1:s, b) = next
    end do
  end subroutine

  ! The step's monitors, stored with it as named scalars: the heat content (the integral
  ! of T over the domain), summed block by block in Morton order whatever the rank count,
  ! so that it is bit for bit the same on any number of ranks.
  subroutine set_monitors()                                                              !R
    real(c_double) :: per_block(0:nblk - 1), heat(0:nblk - 1)
    per_block = 0
    do b = first, last
      per_block(b) = sum(t(1:s, 1:s, 1:s, b)) * h**3
    end do
    call MPI_Allreduce(per_block, heat, nblk, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call rewind_file_set_scalar(file, 'heat', sum(heat))                                 !R
  end subroutine                                                                         !R

  ! This rank's blocks from FILE@SEL (a restart on any rank count, or a branch's start).
  subroutine reload(spec, at_step, at_time)                                              !R
    character(len=*), intent(in) :: spec                                                 !R
    integer(c_int64_t), intent(out) :: at_step                                           !R
    real(c_double), intent(out) :: at_time                                               !R
    type(rewind_reader) :: r                                                             !R
    type(rewind_step_entry) :: e                                                         !R
    type(rewind_tree) :: tree                                                            !R
    real(c_double) :: cells(s * s * s * (last - first + 1))                              !R
    integer(c_int64_t) :: rows(first:last)                                               !R
    integer :: at                                                                        !R
    character(len=:), allocatable :: note                                                !R
    at = index(spec, '@', back=.true.)                                                   !R
    if (at == 0) at = len(spec) + 1                                                      !R
    call rewind_reader_open(r, MPI_COMM_WORLD, spec(1:at - 1))                    !R
    if (at > len(spec)) then  ! the checkpoint `rewind run --restart FILE@SEL` takes      !R
      call rewind_reader_find_checkpoint(r, 'latest', e, note)                    !R
    else                                                                                 !R
      call rewind_reader_find_checkpoint(r, spec(at + 1:), e, note)               !R
    end if                                                                               !R
    if (rank == 0 .and. len(note) > 0) print '(2a)', 'heat3d: note: ', note
    call rewind_reader_topology(r, e%step, tree)                                  !R
    do b = first, last                                                                   !R
      rows(b) = findloc(tree%uid, uid(b), dim=1) - 1                                     !R
    end do                                                                               !R
    call rewind_reader_read(r, e%step, 'T', rows, cells)                          !R
    t(1:s, 1:s, 1:s, first:last) = reshape(cells, [s, s, s, last - first + 1])           !R
    at_step = e%step; at_time = e%time                                                   !R
    call rewind_reader_close(r)                                                          !R
  end subroutine                                                                         !R

end program heat3d
