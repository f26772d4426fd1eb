# perfmon(4) over the channel (vpmu_perfmon(4)): test/pv/perfmon.c checks
# every rule of the driver with its exact errno and the exact counts of a
# known loop through PMIOREAD, on the exact source.  One summary line.
vpmu_add_guest(guest_pv_perfmon perfmon.c)
pv_test(perfmon_rules 0 "^perfmon: 119 of 119 ok$"
  --source exact ${guest_pv_perfmon_ELF})
# The device does not depend on the guest-visible model: the same with none.
pv_test(perfmon_pmu_none 0 "^perfmon: 119 of 119 ok$"
  --source exact --pmu none ${guest_pv_perfmon_ELF})

# The 40-bit mask of PMIOREAD and PCIOCRD, which no guest can reach in a
# test's time: a host program rings the doorbell itself on a VM whose
# synthetic source counts 2^40 + 12345 instructions (perfmon_mask.c).
add_executable(test_pv_devmask perfmon_mask.c)
target_include_directories(test_pv_devmask PRIVATE
  ${PROJECT_SOURCE_DIR}/guest-api/guest/include)
target_link_libraries(test_pv_devmask PRIVATE vpmu_static)
# Exit status 0 (no failure) and the summary line, both checked by expect.sh.
add_test(NAME perfmon_pctr_mask40 COMMAND sh ${PV_RUN} -o 0
  "^perfmon_mask: 16 of 16 ok$" -- $<TARGET_FILE:test_pv_devmask>)
set_tests_properties(perfmon_pctr_mask40 PROPERTIES TIMEOUT 60)

# The same counts in blocks as stepping (exact_modes.sh).
exact_modes_test(perfmon_rules ${guest_pv_perfmon_ELF})
