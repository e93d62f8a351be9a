! The module `rewind` without `ierr`, as ADIOS2's Fortran bindings: a failed call stops
! the program with the library's message (fortran_handles.sh expects a non-zero exit, the
! message on the error unit, and nothing after the call).
program fortran_stop
  use mpi
  use rewind
  implicit none
  type(rewind_config) :: cfg
  integer :: ierr
  call MPI_Init(ierr)
  call rewind_config_create(cfg)
  call rewind_config_set_option(cfg, 'checksums', 'maybe')
  print '(a)', 'not reached'
  call MPI_Finalize(ierr)
end program
