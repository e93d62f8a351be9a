! The Fortran module `rewind` as an outside Fortran code uses it: a 3-D tree of 4^3-cell
! grids (root + 8 children, children round-robin over the ranks, the root without arrays:
! averaged by the library), a checkpoint, a restart read of this rank's partition checked
! value by value (and read_into padded blocks), the file's variables, the versions, a
! branch and its lineage, a step's named scalars, and errors (ierr present: a status). Prints ok/FAIL lines; exit 0
! when every check held on every rank.
!   mpiexec -n P fortran_roundtrip OUT.h5
program fortran_roundtrip
  use mpi
  use rewind
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: s = 4, h = 1
  type(rewind_config) :: cfg
  type(rewind_grids) :: grids
  type(rewind_file) :: file
  type(rewind_reader) :: reader
  integer :: ierr, rank, nranks, rc, c, bad, all_bad, failures, total
  integer(c_int64_t) :: at, children(8), uid, step, n
  integer(c_int64_t), pointer :: rows(:)
  real(c_double), target, allocatable :: t(:, :, :, :)     ! (x, y, z, child) with ghosts
  real(c_double), allocatable :: buf(:), back(:, :, :, :)
  character(len=:), allocatable :: vname, vunit
  integer :: nv, mine
  integer(c_int64_t) :: idx(8)
  real(c_float), target, allocatable :: tf(:, :, :, :)
  real(c_double) :: bbox(6), x, y, z, ptime, value
  character(len=:), allocatable :: sname
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

  call rewind_config_create(cfg, ierr=rc)
  call check(rc == REWIND_OK, 'rewind_config_create')
  call rewind_config_set_geometry(cfg, 3, [s, s, s], 2, [0d0, 2d0, 0d0, 2d0, 0d0, 2d0], ierr=rc)
  call check(rc == REWIND_OK, 'set_geometry')
  call rewind_config_add_variable(cfg, 'T', 'K')  ! without ierr: a failure would stop here
  call rewind_config_set_option(cfg, 'checksums', 'maybe', ierr=rc)
  call check(rc == REWIND_ERR_ARGUMENT, 'a bad option value is refused (ierr present: the status)')
  call check(index(rewind_last_error(), 'checksums') > 0, '... and the message names the option')
  call rewind_grids_create(grids, h, ierr=rc)
  call check(rc == REWIND_OK, 'grids_create')

  do c = 0, 7
    children(c + 1) = ior(shiftl(1_c_int64_t, 58), int(c, c_int64_t))
  end do
  if (rank == 0) then
    call rewind_grids_add(grids, 0_c_int64_t, 0, 0_c_int64_t, [0d0, 2d0, 0d0, 2d0, 0d0, 2d0], REWIND_NO_UID, &
                          children, at, ierr=rc)
    call check(rc == REWIND_OK, 'the root, without arrays')
  end if
  allocate (t(s + 2*h, s + 2*h, s + 2*h, 8))
  t = 0
  do c = 0, 7
    if (mod(c, nranks) /= rank) cycle
    x = iand(c, 1); y = iand(shiftr(c, 1), 1); z = iand(shiftr(c, 2), 1)
    bbox = [x, x + 1, y, y + 1, z, z + 1]
    uid = children(c + 1)
    call rewind_grids_add(grids, uid, 1, uid, bbox, 0_c_int64_t, [integer(c_int64_t) ::], at)
    idx(c + 1) = at
    t(h + 1:h + s, h + 1:h + s, h + 1:h + s, c + 1) = expected(bbox, .false.)
    call rewind_grids_set_field(grids, at, 0, t(:, :, :, c + 1), ierr=rc)
    call check(rc == REWIND_OK, 'set_field of a child')
  end do

  mine = count([(mod(c, nranks) == rank, c = 0, 7)]) + merge(1, 0, rank == 0)
  call rewind_grids_count(grids, n)
  call check(n == mine, 'rewind_grids_count: the grids this rank described')
  call check(rewind_library_api_version() == REWIND_API_VERSION, 'the library implements this module''s API version')
  call check(index(rewind_library_version(), 'rewind') == 1, 'rewind_library_version: '//rewind_library_version())
  call rewind_file_create(file, MPI_COMM_WORLD, trim(path), cfg, ierr=rc)
  call check(rc == REWIND_OK, 'file_create')
  call rewind_file_set_scalar(file, 'energy', 0.1d0 + 0.2d0)
  call rewind_file_set_scalar(file, 'residual', 1d-8)
  call rewind_file_write(file, 10_c_int64_t, 1d0, 0.1d0, REWIND_CHECKPOINT, grids, ierr=rc)
  call check(rc == REWIND_OK, 'a checkpoint with two named scalars')
  call rewind_file_last_step(file, step)
  call check(step == 10, 'rewind_file_last_step: 10')
  call rewind_file_close(file, ierr=rc)
  call check(rc == REWIND_OK, 'close')

  call rewind_reader_open(reader, MPI_COMM_WORLD, trim(path), ierr=rc)
  call check(rc == REWIND_OK, 'reader_open')
  call rewind_reader_find_step(reader, 'latest', entry, ierr=rc)
  call check(rc == REWIND_OK .and. entry%step == 10, 'find_step latest')
  call rewind_reader_scalar_count(reader, entry%step, nv)
  call rewind_reader_scalar(reader, entry%step, 0, sname, value)
  call check(nv == 2 .and. sname == 'energy' .and. value == 0.1d0 + 0.2d0, 'its scalars: energy first, bit for bit')
  call rewind_reader_scalar(reader, entry%step, 2, sname, value, ierr=rc)
  call check(rc == REWIND_ERR_ARGUMENT, 'scalar 2 of 2: refused')
  call rewind_reader_topology(reader, entry%step, tree, ierr=rc)
  call check(rc == REWIND_OK .and. tree%n_grids == 9, 'topology: 9 grids')
  call rewind_reader_partition(reader, entry%step, rank, nranks, rows, ierr=rc)
  call check(rc == REWIND_OK, 'partition')
  allocate (buf(max(size(rows), 1) * s**3))
  call rewind_reader_read(reader, entry%step, 'T', rows, buf, ierr=rc)
  call check(rc == REWIND_OK, 'read T of my rows')
  bad = 0
  do c = 1, size(rows)
    if (tree%level(rows(c) + 1) /= 1) cycle   ! leaves: the children
    if (any(reshape(buf((c - 1) * s**3 + 1:c * s**3), [s, s, s]) /= expected(tree%bbox(:, rows(c) + 1), .false.))) &
      bad = bad + 1
  end do
  call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(all_bad == 0, 'every leaf value read back bit for bit')
  ! read_into: the same rows straight into padded blocks, ghosts left alone
  allocate (back(s + 2*h, s + 2*h, s + 2*h, max(size(rows), 1)))
  back = -1
  call rewind_reader_read_into(reader, entry%step, 'T', rows, back, h, ierr=rc)
  call check(rc == REWIND_OK, 'read_into my rows')
  bad = 0
  do c = 1, size(rows)
    if (any(reshape(back(h + 1:h + s, h + 1:h + s, h + 1:h + s, c), [s**3]) /= buf((c - 1) * s**3 + 1:c * s**3))) &
      bad = bad + 1
    if (any(back(1, :, :, c) /= -1) .or. any(back(:, :, s + 2*h, c) /= -1)) bad = bad + 1
  end do
  call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(all_bad == 0, '... each block''s interior equal to rewind_reader_read''s, its ghosts untouched')
  call rewind_reader_read_into(reader, entry%step, 'T', rows, back(:, :, :, 1:0), h, ierr=rc)
  call check(rc /= REWIND_OK, 'read_into with fewer blocks than rows: refused')
  call rewind_reader_variable_count(reader, nv, ierr=rc)
  call check(rc == REWIND_OK .and. nv == 1, 'rewind_reader_variable_count: 1')
  call rewind_reader_variable(reader, 0, vname, vunit, ierr=rc)
  call check(rc == REWIND_OK .and. vname == 'T' .and. vunit == 'K', 'rewind_reader_variable 0: T [K]')
  call rewind_reader_variable(reader, 1, vname, vunit, ierr=rc)
  call check(rc == REWIND_ERR_ARGUMENT, 'variable 1 of 1: refused')
  call rewind_reader_find_step(reader, 't=50', entry, ierr=rc)
  call check(rc == REWIND_ERR_NO_SUCH_STEP, 'a time not reached is refused')
  call rewind_reader_close(reader)

  step = 10
  call rewind_file_create_branch(file, MPI_COMM_WORLD, trim(path)//'.branch.h5', trim(path), step, ['kappa=2'], ierr=rc)
  call check(rc == REWIND_OK, 'create_branch')
  call rewind_file_write(file, 11_c_int64_t, 1.1d0, 0.1d0, REWIND_CHECKPOINT, grids, ierr=rc)
  call check(rc == REWIND_OK, 'branch step')
  call rewind_file_close(file)
  call rewind_reader_open(reader, MPI_COMM_NULL, trim(path)//'.branch.h5', ierr=rc)
  call check(rc == REWIND_OK, 'open the branch')
  call rewind_reader_lineage(reader, parent, step, ptime, ierr=rc)
  call check(rc == REWIND_OK .and. step == 10 .and. len(parent) > 0, 'its lineage: the parent and step 10')
  call rewind_reader_close(reader)

  ! The children again from real(c_float) arrays (rewind_grids_set_field_float): a checkpoint
  ! stores them as doubles, read back equal to the float values.
  allocate (tf(s + 2*h, s + 2*h, s + 2*h, 8))
  tf = real(t, c_float)
  do c = 0, 7
    if (mod(c, nranks) /= rank) cycle
    call rewind_grids_set_field(grids, idx(c + 1), 0, tf(:, :, :, c + 1), ierr=rc)
    call check(rc == REWIND_OK, 'set_field of real(c_float)')
  end do
  call rewind_file_create(file, MPI_COMM_WORLD, trim(path)//'.float.h5', cfg, ierr=rc)
  call check(rc == REWIND_OK, 'file_create (float)')
  call rewind_file_write(file, 1_c_int64_t, 0d0, 0.1d0, REWIND_CHECKPOINT, grids, ierr=rc)
  call check(rc == REWIND_OK, 'a checkpoint from real(c_float) arrays')
  call rewind_file_close(file)
  call rewind_reader_open(reader, MPI_COMM_WORLD, trim(path)//'.float.h5', ierr=rc)
  call check(rc == REWIND_OK, 'open it')
  call rewind_reader_topology(reader, 1_c_int64_t, tree, ierr=rc)
  call check(rc == REWIND_OK, 'its topology')
  call rewind_reader_partition(reader, 1_c_int64_t, rank, nranks, rows, ierr=rc)
  call check(rc == REWIND_OK, 'its partition')
  back = -1
  call rewind_reader_read_into(reader, 1_c_int64_t, 'T', rows, back, h, ierr=rc)
  call check(rc == REWIND_OK, 'read_into')
  bad = 0
  do c = 1, size(rows)
    if (tree%level(rows(c) + 1) /= 1) cycle
    if (any(back(h + 1:h + s, h + 1:h + s, h + 1:h + s, c) /= expected(tree%bbox(:, rows(c) + 1), .true.))) bad = bad + 1
  end do
  call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(all_bad == 0, '... every child read back equal to its float values')
  call rewind_reader_close(reader)

  call rewind_grids_free(grids)
  call rewind_config_free(cfg)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1

contains

  !> The values of the grid with box `bbox` (as float32 values if `as_float`).
  function expected(bbox, as_float) result(v)
    real(c_double), intent(in) :: bbox(6)
    logical, intent(in) :: as_float
    real(c_double) :: v(s, s, s), x, y, z
    integer :: ii, jj, kk
    do kk = 1, s
      do jj = 1, s
        do ii = 1, s
          x = bbox(1) + (ii - 0.5d0) / s
          y = bbox(3) + (jj - 0.5d0) / s
          z = bbox(5) + (kk - 0.5d0) / s
          v(ii, jj, kk) = 300 + sin(x) * cos(2 * y) + z * z
          if (as_float) v(ii, jj, kk) = real(real(v(ii, jj, kk), c_float), c_double)
        end do
      end do
    end do
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
