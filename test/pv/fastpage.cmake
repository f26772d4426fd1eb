# The fast-read pages (vpmu_fastpage(4)): guests through vpmu-run, and the
# unit test's view of the guest headers (its reader is the guests' own).
if(TARGET test_pv_fastpage)
  target_include_directories(test_pv_fastpage PRIVATE ${PROJECT_SOURCE_DIR}/guest-api/guest/include)
  target_link_libraries(test_pv_fastpage PRIVATE Threads::Threads)
endif()

# The exact source in both modes (fastpage_exact.c): stepping, one page
# update per instruction (5 NOPs apart = 6) and a lag of 2 instructions
# against PMCRW; in blocks, no update inside a block (0) and the lag
# vpmu_fastpage(4) gives as the most, 62 (two blocks of 31).  Both: no
# reader retries, SET/CLEAR/GETMSR errors, CLEAR and process exit stop the
# writes.  --fastpage-hz 0: the exits are the only writers.  (With the
# thread on, a host-side pause of over 1 ms between two exits -- a
# doorbell, a console line, a busy machine -- lets it refresh the page with
# the sequence lock, and "seq unchanged" would depend on timing.)
vpmu_add_guest(guest_pv_fastpage_exact fastpage_exact.c)
pv_test(pv_fastpage_exact 0
  "^fastpage exact: lag 2 instructions, gaps 6 6 6 6, 0 failed$"
  --source exact --exact-mode step --fastpage-hz 0 ${guest_pv_fastpage_exact_ELF})
pv_test(pv_fastpage_exact_block 0
  "^fastpage exact: lag 62 instructions, gaps 0 0 0 0, 0 failed$"
  --source exact --exact-mode block --fastpage-hz 0 ${guest_pv_fastpage_exact_ELF})

# The refresh thread while the guest spins without an exit (perf's msr/tsc
# counts meanwhile): updates, seq and value move, no exit happens, the value
# never goes back, and the thread never refreshes faster than its rate.
# What no load on the host changes, and nothing else: how late the thread
# comes is a figure (a busy host made a 20 ms bound on the gap fail).  The
# same guest prints test/bench/pv.sh's figures.
vpmu_add_guest(guest_pv_fastpage_spin fastpage_spin.c)
pv_test(pv_fastpage_spin 0
  "^fastpage spin: ok: exits 0, updates rose, value rose, seq rose, read errors 0, value back 0, updates early 0$"
  --source perf --uncounted allow --fastpage-hz 1000 ${guest_pv_fastpage_spin_ELF})
