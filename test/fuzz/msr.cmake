# The models' MSR handlers through the exit contract and the direct entry
# points, every model, multiplexing on and off, synthetic and exact sources.
vpmu_fuzz(msr SOURCES fuzz_msr.c
    ${PROJECT_SOURCE_DIR}/libvpmu/intel.c ${PROJECT_SOURCE_DIR}/libvpmu/amd.c
    ${PROJECT_SOURCE_DIR}/libvpmu/arch.c
    ${PROJECT_SOURCE_DIR}/libvpmu/model.c ${PROJECT_SOURCE_DIR}/libvpmu/gpmu.c
    ${PROJECT_SOURCE_DIR}/libvpmu/gpmu_cpuid.c ${PROJECT_SOURCE_DIR}/libvpmu/gpmu_report.c
    ${PROJECT_SOURCE_DIR}/libvpmu/vcpu.c ${PROJECT_SOURCE_DIR}/libvpmu/rdpmc.c
    ${PROJECT_SOURCE_DIR}/libvpmu/count.c ${PROJECT_SOURCE_DIR}/libvpmu/pmc.c
    ${PROJECT_SOURCE_DIR}/libvpmu/pmc_row.c ${PROJECT_SOURCE_DIR}/libvpmu/pmc_model.c
    ${PROJECT_SOURCE_DIR}/libvpmu/pmc_report.c
  INCLUDES ${PROJECT_SOURCE_DIR}/libvpmu ${PROJECT_SOURCE_DIR}/guest-api
    ${PROJECT_SOURCE_DIR}/guest-api/guest/include
  LIBS vpmu_static SEED msr_seed)
