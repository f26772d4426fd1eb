# perfmon(4) over the channel (vpmu_perfmon(4)): test/pv/perfmon.c checks
# every rule of the driver with its exact errno and the exact counts of a
# known loop through PMIOREAD, on the exact source.  One summary line.
vpmu_add_guest(guest_pv_perfmon perfmon.c)
pv_test(perfmon_rules 0 "^perfmon: 119 of 119 ok$"
  --source exact ${guest_pv_perfmon_ELF})
# The device does not depend on the guest-visible model: the same with none.
pv_test(perfmon_pmu_none 0 "^perfmon: 119 of 119 ok$"
  --source exact --pmu none ${guest_pv_perfmon_ELF})
