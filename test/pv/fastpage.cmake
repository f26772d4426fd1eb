# The fast-read pages (vpmu_fastpage(4)): guests through vpmu-run, and the
# unit test's view of the guest headers (its reader is the guests' own).
if(TARGET test_pv_fastpage)
  target_include_directories(test_pv_fastpage PRIVATE ${PROJECT_SOURCE_DIR}/guest-api/guest/include)
  target_link_libraries(test_pv_fastpage PRIVATE Threads::Threads)
endif()
