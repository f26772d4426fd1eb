# Two processes (issue 14, "Load and isolation"): two guests run alone, then
# at once (two of each), under vpmu-run on the exact source; each must count
# exactly what it counted alone, and each log hold only its own records
# (isolation.sh).  The two builds differ in their loop and their log cookie.
vpmu_add_guest(guest_pv_isolation_a isolation_guest.c DEFINES ISO_N=40000 ISO_TAG=0xA11CE)
vpmu_add_guest(guest_pv_isolation_b isolation_guest.c DEFINES ISO_N=70001 ISO_TAG=0xB0B)
add_test(NAME pv_isolation_two_processes COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/isolation.sh
  $<TARGET_FILE:vpmu-run> $<TARGET_FILE:vpmustat> ${guest_pv_isolation_a_ELF}
  ${guest_pv_isolation_b_ELF} ${CMAKE_CURRENT_BINARY_DIR}/isolation)
set_tests_properties(pv_isolation_two_processes PROPERTIES ENVIRONMENT VPMU_SKIP_NO_KVM=1
  SKIP_RETURN_CODE 77 TIMEOUT 300)
