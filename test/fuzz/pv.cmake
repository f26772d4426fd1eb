# The paravirtual channel (vpmu_pv(4)): every op, corrupted headers, blocks
# anywhere in a sparse guest RAM, raw port accesses, among MSR and other exits.
vpmu_fuzz(pv SOURCES fuzz_pv.c
    ${PROJECT_SOURCE_DIR}/guest-api/pv.c ${PROJECT_SOURCE_DIR}/guest-api/pv_hwpmc.c
    ${PROJECT_SOURCE_DIR}/guest-api/pv_perfmon.c ${PROJECT_SOURCE_DIR}/guest-api/pv_pctr.c
    ${PROJECT_SOURCE_DIR}/guest-api/pv_fastpage.c ${PROJECT_SOURCE_DIR}/guest-api/pv_dev.c
    ${PROJECT_SOURCE_DIR}/libvpmu/op.c ${PROJECT_SOURCE_DIR}/libvpmu/proc.c
    ${PROJECT_SOURCE_DIR}/libvpmu/pmc.c ${PROJECT_SOURCE_DIR}/libvpmu/pmc_row.c
    ${PROJECT_SOURCE_DIR}/libvpmu/pmc_model.c ${PROJECT_SOURCE_DIR}/libvpmu/pmc_report.c
    ${PROJECT_SOURCE_DIR}/libvpmu/count.c
    ${PROJECT_SOURCE_DIR}/libvpmu/vcpu.c ${PROJECT_SOURCE_DIR}/libvpmu/log.c
  INCLUDES ${PROJECT_SOURCE_DIR}/libvpmu ${PROJECT_SOURCE_DIR}/guest-api
    ${PROJECT_SOURCE_DIR}/guest-api/guest/include
  LIBS vpmu_static SEED pv_seed)
# The seeds are built from the channel's own op table (pvchan.h).
target_include_directories(pv_seed PRIVATE ${PROJECT_SOURCE_DIR}/libvpmu
  ${PROJECT_SOURCE_DIR}/guest-api ${PROJECT_SOURCE_DIR}/guest-api/guest/include)
