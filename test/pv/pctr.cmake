# pctr(4) over the channel (vpmu_pctr(4)): test/pv/pctr.c checks the
# driver's rules in its order with the exact errnos, and exact counts of a
# known loop through PCIOCRD and rdpmc() (the fast-read page), on the exact
# source.  The guest finds the model's counter count itself; each run's
# summary line names it.  --fastpage-hz 0: the exits are the only writers
# of the page, so rdpmc()'s exact spans never include a reader's retry over
# a refresh the thread made during a host-side pause of over 1 ms (as in
# fastpage.cmake; seen with the in-kernel irqchip's dearer exits).
vpmu_add_guest(guest_pv_pctr pctr.c)
pv_test(pctr_intel 0 "^pctr: intel: 51 of 51 ok$"
  --source exact --fastpage-hz 0 --pmu intel-v2 ${guest_pv_pctr_ELF})
pv_test(pctr_amd 0 "^pctr: amd: 48 of 48 ok$"
  --source exact --fastpage-hz 0 --pmu amd-v2 ${guest_pv_pctr_ELF})
pv_test(pctr_pmu_none 0 "^pctr: none: 19 of 19 ok$"
  --source exact --pmu none ${guest_pv_pctr_ELF})

# The same counts in blocks as stepping (exact_modes.sh).
exact_modes_test(pctr_intel --fastpage-hz 0 --pmu intel-v2 ${guest_pv_pctr_ELF})
