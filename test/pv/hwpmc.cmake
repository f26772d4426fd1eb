# The hwpmc personality of the channel (guest-api/pv_hwpmc.c) from inside guests.

# Every operation and hook with hwpmc(4)'s errno, every malformed block
# (hwpmc.c's table: one FAIL line per wrong case, then the count).
vpmu_add_guest(guest_pv_hwpmc hwpmc.c)
pv_test(pv_hwpmc_guest 0 "^hwpmc pv: 181 of 181 ok$"
  --source synthetic --guest-log 3=${CMAKE_CURRENT_BINARY_DIR}/pv_hwpmc.log
  ${guest_pv_hwpmc_ELF})

# A TC PMC on "instructions" around a known loop counts exactly 3n + 2
# (hwpmc_exact.c explains the 2) with the exact source.
vpmu_add_guest(guest_pv_hwpmc_exact hwpmc_exact.c)
pv_test(pv_hwpmc_exact 0
  "^hwpmc exact: n=1000 3002 \\(want 3002\\), n=100000 300002 \\(want 300002\\)$"
  --source exact ${guest_pv_hwpmc_exact_ELF})

# examples/guests/pmcstat.c: pmcstat's table for the guest's own process;
# 49999 more iterations of the 3-instruction loop add exactly 3 x 49999
# instructions, 49999 branches and (CPI 1) 149997 cycles.
if(TARGET pmcstat)
  pv_test(pv_pmcstat_example 0
    "^pmcstat: 49999 iterations more: \\+149997 instructions \\+49999 branches \\+149997 cycles$"
    --source exact $<TARGET_PROPERTY:pmcstat,VPMU_GUEST_ELF>)
endif()
