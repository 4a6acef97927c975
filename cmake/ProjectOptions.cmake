include(GNUInstallDirs)

# Build settings shared by every chunkmeta target, as an interface target
# (no global flag edits). Link it PRIVATE; it never reaches consumers.
add_library(chunkmeta_project_options INTERFACE)
target_compile_features(chunkmeta_project_options INTERFACE cxx_std_20)
target_compile_options(chunkmeta_project_options INTERFACE -Wall -Wextra -Wpedantic
                       $<$<BOOL:${CHUNKMETA_WARNINGS_AS_ERRORS}>:-Werror>)

# Whether clang's fuzzer coverage instrumentation is on (read by harness/ too).
set(CHUNKMETA_FUZZER_INSTRUMENTED FALSE)
if(CHUNKMETA_SANITIZERS MATCHES "fuzzer" AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(CHUNKMETA_FUZZER_INSTRUMENTED TRUE)
endif()

if(CHUNKMETA_SANITIZERS)
  target_compile_options(chunkmeta_project_options INTERFACE -fsanitize=${CHUNKMETA_SANITIZERS}
                         -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(chunkmeta_project_options INTERFACE -fsanitize=${CHUNKMETA_SANITIZERS})
  if(CHUNKMETA_FUZZER_INSTRUMENTED)
    # The depfile entry rebuilds every object when the list changes (clang 14
    # lists its own sanitizer lists there, but not this one).
    set(coverage_ignorelist ${PROJECT_SOURCE_DIR}/fuzz/coverage_ignorelist.txt)
    target_compile_options(chunkmeta_project_options INTERFACE -fsanitize-coverage-ignorelist=${coverage_ignorelist}
                           "SHELL:-Xclang -fdepfile-entry=${coverage_ignorelist}")
  endif()
endif()

if(CHUNKMETA_COVERAGE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "CHUNKMETA_COVERAGE needs clang (source-based coverage)")
  endif()
  target_compile_options(chunkmeta_project_options INTERFACE -fprofile-instr-generate -fcoverage-mapping)
  target_link_options(chunkmeta_project_options INTERFACE -fprofile-instr-generate)
endif()

# Executables land in <build>/bin.
set(CHUNKMETA_BIN_DIR "${PROJECT_BINARY_DIR}/bin")
