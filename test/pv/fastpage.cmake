# The fast-read pages (vpmu_fastpage(4)): guests through vpmu-run, and the
# unit test's view of the guest headers (its reader is the guests' own).
if(TARGET test_pv_fastpage)
  target_include_directories(test_pv_fastpage PRIVATE ${PROJECT_SOURCE_DIR}/guest-api/guest/include)
  target_link_libraries(test_pv_fastpage PRIVATE Threads::Threads)
endif()

# The exact source: one page update per instruction (k NOPs apart = k + 1),
# a constant lag of 2 instructions against PMCRW, no reader
# retries, SET/CLEAR/GETMSR errors, CLEAR and process exit stop the writes.
vpmu_add_guest(guest_pv_fastpage_exact fastpage_exact.c)
pv_test(pv_fastpage_exact 0 "^fastpage exact: lag 2 instructions, 0 failed$"
  --source exact ${guest_pv_fastpage_exact_ELF})
