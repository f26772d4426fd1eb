# The exact source over hostile guest memory (fuzz_exact.c): the decoder
# against Zydis, the page walk and frame walk against references, and
# debug exits through the exit contract.
vpmu_fuzz(exact SOURCES fuzz_exact.c ${PROJECT_SOURCE_DIR}/backends/decode.c
    ${PROJECT_SOURCE_DIR}/backends/decode_operands.c
    ${PROJECT_SOURCE_DIR}/backends/exact.c ${PROJECT_SOURCE_DIR}/backends/exact_step.c
    ${PROJECT_SOURCE_DIR}/backends/exact_block.c ${PROJECT_SOURCE_DIR}/backends/exact_loop.c
    ${PROJECT_SOURCE_DIR}/backends/exact_complete.c ${PROJECT_SOURCE_DIR}/backends/alu.c
    ${PROJECT_SOURCE_DIR}/backends/alu_host.c
    ${PROJECT_SOURCE_DIR}/backends/branch.c ${PROJECT_SOURCE_DIR}/backends/interp.c
    ${PROJECT_SOURCE_DIR}/libvpmu/gmem.c
  INCLUDES ${PROJECT_SOURCE_DIR}/libvpmu ${PROJECT_SOURCE_DIR}/backends ${ZYDIS_INCLUDE_DIR}
  LIBS vpmu_static ${ZYDIS_LIBRARY} SEED exact_seed)
