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
  ${vs_src}/symbols.c ${vs_src}/ksyms.c ${vs_src}/flame.c ${vs_src}/formats.c
  ${PROJECT_SOURCE_DIR}/libvpmu/pmclog.c
  INCLUDES ${vs_src} ${LIBELF_INCLUDE_DIR} LIBS ${LIBELF_LIBRARY} z m SEED vpmustat_seed)
if(TARGET hot)
  foreach(t fuzz_vpmustat vpmustat_seed)
    target_compile_definitions(${t} PRIVATE VS_FUZZ_ELF="$<TARGET_PROPERTY:hot,VPMU_GUEST_ELF>")
    add_dependencies(${t} hot)
  endforeach()
endif()
