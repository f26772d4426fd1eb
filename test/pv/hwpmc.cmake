# The hwpmc personality of the channel (guest-api/pv_hwpmc.c) from inside guests.

# Every operation and hook with hwpmc(4)'s errno, every malformed block
# (hwpmc.c's table: one FAIL line per wrong case, then the count).
vpmu_add_guest(guest_pv_hwpmc hwpmc.c)
pv_test(pv_hwpmc 0 "^hwpmc pv: 179 of 179 ok$"
  --source synthetic --guest-log 3=${CMAKE_CURRENT_BINARY_DIR}/pv_hwpmc.log
  ${guest_pv_hwpmc_ELF})

# A TC PMC on "instructions" around a known loop counts exactly 3n + 2
# (hwpmc_exact.c explains the 2) with the exact source.
vpmu_add_guest(guest_pv_hwpmc_exact hwpmc_exact.c)
pv_test(pv_hwpmc_exact 0
  "^hwpmc exact: n=1000 3002 \\(want 3002\\), n=100000 300002 \\(want 300002\\)$"
  --source exact ${guest_pv_hwpmc_exact_ELF})
