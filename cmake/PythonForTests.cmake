# Interpreters for the tests of the Python adapter (optional: without python3
# those tests are skipped, not failed). CHUNKMETA_PYTHON runs the adapter with
# plain lists; CHUNKMETA_TORCH_PYTHON is the first candidate that imports torch
# (Debian's python3-torch lives under /usr/bin/python3, which a pyenv or venv
# python3 on PATH may hide).
find_program(CHUNKMETA_PYTHON NAMES python3 DOC "python3 for the adapter tests")
# The interpreter itself, not a launcher in front of it: pyenv's shim is a chain
# of shell scripts that costs about 0.5 s a start, and the tests start Python
# hundreds of times (a restarted implementation, each door of each mutant).
if(CHUNKMETA_PYTHON)
  execute_process(COMMAND "${CHUNKMETA_PYTHON}" -c "import sys; print(sys.executable)" RESULT_VARIABLE python_runs
                  OUTPUT_VARIABLE python_itself OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(python_runs EQUAL 0 AND IS_ABSOLUTE "${python_itself}" AND EXISTS "${python_itself}"
     AND NOT python_itself STREQUAL CHUNKMETA_PYTHON)
    set(CHUNKMETA_PYTHON "${python_itself}" CACHE FILEPATH "python3 for the adapter tests" FORCE)
  endif()
endif()
if(NOT DEFINED CACHE{CHUNKMETA_TORCH_PYTHON})
  set(torch_python "")
  foreach(candidate IN ITEMS ${CHUNKMETA_PYTHON} /usr/bin/python3)
    if(EXISTS "${candidate}")
      execute_process(COMMAND "${candidate}" -c "import torch" RESULT_VARIABLE imports_torch OUTPUT_QUIET ERROR_QUIET)
      if(imports_torch EQUAL 0)
        set(torch_python "${candidate}")
        break()
      endif()
    endif()
  endforeach()
  set(CHUNKMETA_TORCH_PYTHON "${torch_python}" CACHE STRING "A python3 that imports torch (empty: skip the torch test)")
endif()
if(NOT CHUNKMETA_PYTHON)
  set(CHUNKMETA_PYTHON "")
endif()
message(STATUS "chunkmeta: python for the adapter tests: '${CHUNKMETA_PYTHON}', with torch: '${CHUNKMETA_TORCH_PYTHON}'")
