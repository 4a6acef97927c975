include(GNUInstallDirs)

# Build settings shared by every chunkmeta target, as an interface target
# (no global flag edits). Link it PRIVATE; it never reaches consumers.
add_library(chunkmeta_project_options INTERFACE)
target_compile_features(chunkmeta_project_options INTERFACE cxx_std_20)
target_compile_options(chunkmeta_project_options INTERFACE -Wall -Wextra -Wpedantic
                       $<$<BOOL:${CHUNKMETA_WARNINGS_AS_ERRORS}>:-Werror>)
# No path of the machine that built it in what is installed: __FILE__ in
# messages and the debug information name sources relative to the checkout
# (and the build tree, when it lies outside it). Not in a coverage build,
# which is never installed and whose reports are filtered by absolute path.
if(NOT CHUNKMETA_COVERAGE)
  if(NOT PROJECT_BINARY_DIR MATCHES "^${PROJECT_SOURCE_DIR}/")
    target_compile_options(chunkmeta_project_options INTERFACE "-ffile-prefix-map=${PROJECT_BINARY_DIR}=build")
  endif()
  target_compile_options(chunkmeta_project_options INTERFACE "-ffile-prefix-map=${PROJECT_SOURCE_DIR}=.")
endif()

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

# The corpus `chunkmeta` replays by default, relative to the executable: the
# same relative place in the build tree (a link to the checkout's corpus) and in
# an installed prefix (share/chunkmeta/corpus), so no absolute path is built in.
set(CHUNKMETA_CORPUS_INSTALL_DIR "${CMAKE_INSTALL_DATADIR}/chunkmeta/corpus")
file(RELATIVE_PATH CHUNKMETA_CORPUS_FROM_PROGRAM "/${CMAKE_INSTALL_BINDIR}" "/${CHUNKMETA_CORPUS_INSTALL_DIR}")
