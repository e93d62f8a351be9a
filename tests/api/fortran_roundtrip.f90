! The Fortran module `rewind` as an outside Fortran code uses it: a 3-D tree of 4^3-cell
! grids (root + 8 children, children round-robin over the ranks, the root without arrays:
! averaged by the library), a checkpoint, a restart read of this rank's partition checked
! value by value, a branch and its lineage, and two errors. Prints ok/FAIL lines; exit 0
! when every check held on every rank.
!   mpiexec -n P fortran_roundtrip OUT.h5
program fortran_roundtrip
  use mpi
  use rewind
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: s = 4, h = 1
  type(c_ptr) :: cfg, grids, file, reader
  integer :: ierr, rank, nranks, rc, c, i, j, k, bad, all_bad, failures, total
  integer(c_int64_t) :: at, children(8), uid, step
  integer(c_int64_t), pointer :: rows(:)
  real(c_double), target, allocatable :: t(:, :, :, :)     ! (x, y, z, child) with ghosts
  real(c_double), allocatable :: buf(:)
  real(c_double) :: bbox(6), x, y, z, ptime
  type(rewind_step_entry) :: entry
  type(rewind_tree) :: tree
  character(len=256) :: path
  character(len=:), allocatable :: parent

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  path = 'fortran.h5'
  if (command_argument_count() > 0) call get_command_argument(1, path)
  failures = 0

  call check(rewind_config_create(cfg) == REWIND_OK, 'rewind_config_create')
  call check(rewind_config_set_geometry(cfg, 3, [s, s, s], 2, [0d0, 2d0, 0d0, 2d0, 0d0, 2d0]) == REWIND_OK, 'set_geometry')
  call check(rewind_config_add_variable(cfg, 'T', 'K') == REWIND_OK, 'add_variable')
  call check(rewind_config_set_option(cfg, 'checksums', 'maybe') == REWIND_ERR_ARGUMENT, 'a bad option value is refused')
  call check(index(rewind_last_error(), 'checksums') > 0, '... and the message names the option')
  call check(rewind_grids_create(grids, h) == REWIND_OK, 'grids_create')

  do c = 0, 7
    children(c + 1) = ior(shiftl(1_c_int64_t, 58), int(c, c_int64_t))
  end do
  if (rank == 0) then
    call check(rewind_grids_add(grids, 0_c_int64_t, 0, 0_c_int64_t, [0d0, 2d0, 0d0, 2d0, 0d0, 2d0], REWIND_NO_UID, &
                                children, at) == REWIND_OK, 'the root, without arrays')
  end if
  allocate (t(s + 2*h, s + 2*h, s + 2*h, 8))
  t = 0
  do c = 0, 7
    if (mod(c, nranks) /= rank) cycle
    x = iand(c, 1); y = iand(shiftr(c, 1), 1); z = iand(shiftr(c, 2), 1)
    bbox = [x, x + 1, y, y + 1, z, z + 1]
    uid = children(c + 1)
    rc = rewind_grids_add(grids, uid, 1, uid, bbox, 0_c_int64_t, [integer(c_int64_t) ::], at)
    do k = 1, s
      do j = 1, s
        do i = 1, s
          t(i + h, j + h, k + h, c + 1) = value_at(bbox(1) + (i - 0.5d0) / s, bbox(3) + (j - 0.5d0) / s, bbox(5) + (k - 0.5d0) / s)
        end do
      end do
    end do
    call check(rewind_grids_set_field(grids, at, 0, t(:, :, :, c + 1)) == REWIND_OK, 'set_field of a child')
  end do

  call check(rewind_file_create(file, MPI_COMM_WORLD, trim(path), cfg) == REWIND_OK, 'file_create')
  call check(rewind_file_write(file, 10_c_int64_t, 1d0, 0.1d0, REWIND_CHECKPOINT, grids) == REWIND_OK, 'a checkpoint')
  call check(rewind_file_close(file) == REWIND_OK, 'close')

  call check(rewind_reader_open(reader, MPI_COMM_WORLD, trim(path)) == REWIND_OK, 'reader_open')
  call check(rewind_reader_find_step(reader, 'latest', entry) == REWIND_OK .and. entry%step == 10, 'find_step latest')
  call check(rewind_reader_topology(reader, entry%step, tree) == REWIND_OK .and. tree%n_grids == 9, 'topology: 9 grids')
  call check(rewind_reader_partition(reader, entry%step, rank, nranks, rows) == REWIND_OK, 'partition')
  allocate (buf(max(size(rows), 1) * s**3))
  call check(rewind_reader_read(reader, entry%step, 'T', rows, buf) == REWIND_OK, 'read T of my rows')
  bad = 0
  do c = 1, size(rows)
    if (tree%level(rows(c) + 1) /= 1) cycle   ! leaves: the children
    bbox = tree%bbox(:, rows(c) + 1)
    do k = 1, s
      do j = 1, s
        do i = 1, s
          if (buf((c - 1) * s**3 + i + s * ((j - 1) + s * (k - 1))) /= &
              value_at(bbox(1) + (i - 0.5d0) / s, bbox(3) + (j - 0.5d0) / s, bbox(5) + (k - 0.5d0) / s)) bad = bad + 1
        end do
      end do
    end do
  end do
  call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(all_bad == 0, 'every leaf value read back bit for bit')
  call check(rewind_reader_find_step(reader, 't=50', entry) == REWIND_ERR_NO_SUCH_STEP, 'a time not reached is refused')
  rc = rewind_reader_close(reader)

  step = 10
  call check(rewind_file_create_branch(file, MPI_COMM_WORLD, trim(path)//'.branch.h5', trim(path), step, &
                                       ['kappa=2'], c_null_ptr) == REWIND_OK, 'create_branch')
  call check(rewind_file_write(file, 11_c_int64_t, 1.1d0, 0.1d0, REWIND_CHECKPOINT, grids) == REWIND_OK, 'branch step')
  rc = rewind_file_close(file)
  call check(rewind_reader_open(reader, MPI_COMM_NULL, trim(path)//'.branch.h5') == REWIND_OK, 'open the branch')
  call check(rewind_reader_lineage(reader, parent, step, ptime) == REWIND_OK .and. step == 10 .and. len(parent) > 0, &
             'its lineage: the parent and step 10')
  rc = rewind_reader_close(reader)

  rc = rewind_grids_free(grids)
  rc = rewind_config_free(cfg)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1

contains

  real(c_double) function value_at(x, y, z)
    real(c_double), intent(in) :: x, y, z
    value_at = 300 + sin(x) * cos(2 * y) + z * z
  end function

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      write (*, '(a, i0, a, a, a, a, a)') 'rank ', rank, ': FAIL ', what, ' (', rewind_last_error(), ')'
    else if (rank == 0) then
      write (*, '(a, a)') 'ok   ', what
    end if
  end subroutine

end program fortran_roundtrip
