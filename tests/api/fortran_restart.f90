! A Fortran code's restart on the module `rewind`: the checkpoint FILE@SEL names for a
! restart (rewind_reader_find_checkpoint, collective reader), then a branch of it into
! OUT, whose lineage the h5py oracle compares with the command line's choice
! (restart_selectors.sh). Rank 0 prints "checkpoint STEP" and the note.
!   mpiexec -n P fortran_restart FILE SEL OUT
program fortran_restart
  use mpi
  use rewind
  use, intrinsic :: iso_c_binding
  implicit none
  type(rewind_reader) :: reader
  type(rewind_file) :: file
  type(rewind_step_entry) :: entry
  character(len=4096) :: path, sel, out
  character(len=:), allocatable :: note
  integer :: ierr, rank, rc

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, path)
  call get_command_argument(2, sel)
  call get_command_argument(3, out)
  call rewind_reader_open(reader, MPI_COMM_WORLD, trim(path), ierr=rc)
  if (rc == REWIND_OK) call rewind_reader_find_checkpoint(reader, trim(sel), entry, note, ierr=rc)
  if (rc == REWIND_OK) call rewind_file_create_branch(file, MPI_COMM_WORLD, trim(out), trim(path), entry%step, &
                                                      [character(len=1) ::], ierr=rc)
  if (rc == REWIND_OK) call rewind_file_close(file, ierr=rc)
  if (rank == 0) then
    if (rc == REWIND_OK) then
      print '(a, i0)', 'checkpoint ', entry%step
      print '(2a)', 'note: ', note
    else
      write (0, '(2a)') 'fortran_restart: ', rewind_last_error()
    end if
  end if
  call rewind_reader_close(reader, ierr)
  call MPI_Finalize(ierr)
  if (rc /= REWIND_OK) stop 1
end program
