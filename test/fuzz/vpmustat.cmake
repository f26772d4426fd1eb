# vpmustat -R (examples/vpmustat/): the report, -G, --folded, --svg,
# --perf-script and --pprof of a
# fuzzed log, with or without hot.elf's symbols.  The seed program reads
# the addresses of hot.elf's functions with vpmustat's symbols.c, so it is
# made here, before vpmu_fuzz() would make it with vpmu_static alone.
set(vs_src ${PROJECT_SOURCE_DIR}/examples/vpmustat)
add_executable(vpmustat_seed vpmustat_seed.c ${vs_src}/symbols.c)
target_include_directories(vpmustat_seed PRIVATE ${vs_src} ${LIBELF_INCLUDE_DIR})
target_link_libraries(vpmustat_seed PRIVATE vpmu_static ${LIBELF_LIBRARY})
vpmu_fuzz(vpmustat SOURCES fuzz_vpmustat.c pmclog_mutate.c ${vs_src}/profile.c
  ${vs_src}/samples.c ${vs_src}/logread.c ${vs_src}/report.c ${vs_src}/map.c
  ${vs_src}/symbols.c ${vs_src}/ksyms.c ${vs_src}/flame.c ${vs_src}/formats.c
  ${PROJECT_SOURCE_DIR}/libvpmu/pmclog.c
  INCLUDES ${vs_src} ${LIBELF_INCLUDE_DIR} LIBS ${LIBELF_LIBRARY} z m SEED vpmustat_seed)
if(TARGET hot)
  foreach(t fuzz_vpmustat vpmustat_seed)
    target_compile_definitions(${t} PRIVATE VS_FUZZ_ELF="$<TARGET_PROPERTY:hot,VPMU_GUEST_ELF>")
    add_dependencies(${t} hot)
  endforeach()
endif()

# vpmustat --guest-kallsyms (examples/vpmustat/kallsyms.c): the search of
# fuzzed guest memory for the kernel's symbol table.  Seeds: tables made by
# test/guests/kallsyms_make.c amid other bytes.
add_executable(kallsyms_seed kallsyms_seed.c ${PROJECT_SOURCE_DIR}/test/guests/kallsyms_make.c)
target_include_directories(kallsyms_seed PRIVATE ${PROJECT_SOURCE_DIR}/test/guests)
vpmu_fuzz(kallsyms SOURCES fuzz_kallsyms.c ${vs_src}/kallsyms.c ${vs_src}/ksyms.c
  ${vs_src}/symbols.c
  INCLUDES ${vs_src} ${LIBELF_INCLUDE_DIR} LIBS ${LIBELF_LIBRARY} SEED kallsyms_seed)
