# cmake -DOUTPUT=file -DINPUTS="a;b;..." -P Concatenate.cmake: OUTPUT is the
# INPUTS one after the other (the Python stub from each spec folder's part).
set(text "")
foreach(input IN LISTS INPUTS)
  file(READ "${input}" part)
  string(APPEND text "${part}")
endforeach()
file(WRITE "${OUTPUT}" "${text}")
