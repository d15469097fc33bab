# `nvsvp rtl-check` and `nvsvp rtl-verify` end to end, with tests/cli/expect.sh (exit code, output,
# files). Each takes a second or two.
set(NVSVP_TB_EXPECT ${PROJECT_SOURCE_DIR}/tests/cli/expect.sh)
set(NVSVP_TB_VECTORS ${PROJECT_SOURCE_DIR}/tests/data/vectors)
set(NVSVP_TB_OUT ${CMAKE_CURRENT_BINARY_DIR}/testbench_out)

# nvsvp_testbench_cli_test(NAME <expect.sh options> -- <nvsvp arguments>)
function(nvsvp_testbench_cli_test name)
  add_test(NAME reduction.cli.${name} COMMAND bash ${NVSVP_TB_EXPECT} ${ARGN})
  set_tests_properties(reduction.cli.${name} PROPERTIES TIMEOUT 60
                       ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)
endfunction()

# Every shipped IEEE vector file passes on the RTL.
foreach(dtype f16 bf16 f32)
  foreach(op add min max)
    nvsvp_testbench_cli_test(rtl_check_${dtype}_${op} --stdout "^2500 passed, 0 failed$"
      -- $<TARGET_FILE:nvsvp> rtl-check --vectors ${NVSVP_TB_VECTORS}/${dtype}_${op}.txt --op ${op} --dtype ${dtype})
  endforeach()
endforeach()
nvsvp_testbench_cli_test(rtl_check_both_backends --stdout "^2500 passed, 0 failed$"
  -- $<TARGET_FILE:nvsvp> rtl-check --vectors ${NVSVP_TB_VECTORS}/bf16_add.txt --op add --dtype bf16 --backend both)

# Wrong answers fail with exit 1 and are listed: the add vectors checked as max.
nvsvp_testbench_cli_test(rtl_check_wrong_op_exits_1 --exit 1 --stdout "^[0-9]+ passed, [1-9][0-9]* failed$"
  --stdout "^  line 18: 0000 8001: expected 8001, actual 0000 \\(lane 0\\)$"
  -- $<TARGET_FILE:nvsvp> rtl-check --vectors ${NVSVP_TB_VECTORS}/f16_add.txt --op max --dtype f16)

# Bad input: exit 2, naming the file and line and what was expected.
nvsvp_testbench_cli_test(rtl_check_malformed_exits_2 --exit 2
  --stderr "malformed.txt:5: field 2 \\(B\\) 'ZZ00': expected a hexadecimal f16 encoding of at most 4 digits"
  -- $<TARGET_FILE:nvsvp> rtl-check --vectors ${NVSVP_TB_VECTORS}/malformed.txt --op add --dtype f16)
nvsvp_testbench_cli_test(rtl_check_missing_file_exits_2 --exit 2 --stderr "no-such-file.txt: cannot open"
  -- $<TARGET_FILE:nvsvp> rtl-check --vectors ${NVSVP_TB_VECTORS}/no-such-file.txt --op add --dtype f16)
# A file whose type does not match --dtype: exit 2, naming its dtype line.
nvsvp_testbench_cli_test(rtl_check_f32_file_as_f16_exits_2 --exit 2
  --stderr "f32_add.txt:2: expected f16 vectors \\(--dtype f16\\), the file declares dtype f32"
  -- $<TARGET_FILE:nvsvp> rtl-check --vectors ${NVSVP_TB_VECTORS}/f32_add.txt --op add --dtype f16)
nvsvp_testbench_cli_test(rtl_check_bf16_file_as_f16_exits_2 --exit 2
  --stderr "bf16_min.txt:2: expected f16 vectors \\(--dtype f16\\), the file declares dtype bf16"
  -- $<TARGET_FILE:nvsvp> rtl-check --vectors ${NVSVP_TB_VECTORS}/bf16_min.txt --op min --dtype f16)
nvsvp_testbench_cli_test(rtl_check_f16_file_as_f32_exits_2 --exit 2
  --stderr "f16_max.txt:2: expected f32 vectors \\(--dtype f32\\), the file declares dtype f16"
  -- $<TARGET_FILE:nvsvp> rtl-check --vectors ${NVSVP_TB_VECTORS}/f16_max.txt --op max --dtype f32)
nvsvp_testbench_cli_test(rtl_check_bad_op_exits_2 --exit 2 --stderr "--op xor: expected add, min or max"
  -- $<TARGET_FILE:nvsvp> rtl-check --vectors ${NVSVP_TB_VECTORS}/f32_add.txt --op xor --dtype f32)
nvsvp_testbench_cli_test(rtl_check_bad_backend_exits_2 --exit 2 --stderr "--backend fpga: expected rtl, model or both"
  -- $<TARGET_FILE:nvsvp> rtl-check --vectors ${NVSVP_TB_VECTORS}/f32_add.txt --op add --dtype f32 --backend fpga)

# rtl-verify: directed suite and a short random run on the RTL; the seed is printed.
nvsvp_testbench_cli_test(rtl_verify_directed_on_rtl --stdout "^directed: [0-9]+ passed, 0 failed$"
  --stdout "^rtl-verify: passed$"
  -- $<TARGET_FILE:nvsvp> rtl-verify --directed-only --seed 1)
nvsvp_testbench_cli_test(rtl_verify_random_prints_seed_and_coverage
  --stdout "^rtl-verify: seed 4242, backend rtl \\(reproduce: nvsvp rtl-verify --seed 4242 "
  --stdout "^random: passed" --stdout "^coverage: [0-9]+ of 1269 bins hit" --stdout "^op type class +C1 +C1e"
  --stdout "^bins never hit: [0-9]+" --stdout "^wall: "
  -- $<TARGET_FILE:nvsvp> rtl-verify --random-only --seed 4242 --beats 30000 --coverage)
nvsvp_testbench_cli_test(rtl_verify_without_seed_prints_one --stdout "^rtl-verify: seed [0-9]+, backend model"
  -- $<TARGET_FILE:nvsvp> rtl-verify --random-only --beats 2000 --backend model)
nvsvp_testbench_cli_test(rtl_verify_writes_vcd --fresh ${NVSVP_TB_OUT}/vcd
  --stdout "^vcd: .*/reduction.vcd$"
  --file ${NVSVP_TB_OUT}/vcd/reduction.vcd "enddefinitions"
  -- bash -c "mkdir -p ${NVSVP_TB_OUT}/vcd && exec \"$0\" rtl-verify --random-only --seed 9 --beats 10 --vcd ${NVSVP_TB_OUT}/vcd/reduction.vcd"
     $<TARGET_FILE:nvsvp>)
nvsvp_testbench_cli_test(rtl_verify_vcd_needs_rtl_exits_2 --exit 2 --stderr "--vcd records the RTL"
  -- $<TARGET_FILE:nvsvp> rtl-verify --backend model --vcd ${NVSVP_TB_OUT}/model.vcd)
nvsvp_testbench_cli_test(rtl_verify_bad_backend_exits_2 --exit 2 --stderr "--backend fpga"
  -- $<TARGET_FILE:nvsvp> rtl-verify --backend fpga)
nvsvp_testbench_cli_test(rtl_verify_only_one_only_exits_2 --exit 2 --stderr "exclude each other"
  -- $<TARGET_FILE:nvsvp> rtl-verify --directed-only --random-only)

# The same seed reproduces the run exactly: two processes, identical reports but for wall time.
add_test(NAME reduction.cli.rtl_verify_same_seed_same_report
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/same_seed_same_report.sh $<TARGET_FILE:nvsvp> ${NVSVP_TB_OUT}/same_seed)
set_tests_properties(reduction.cli.rtl_verify_same_seed_same_report PROPERTIES TIMEOUT 60
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# Waveforms: an FST read by fst2vcd (package gtkwave), its window, the same changes as the VCD.
add_test(NAME reduction.cli.rtl_verify_fst_readable_by_fst2vcd
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/fst_wave.sh $<TARGET_FILE:nvsvp> ${NVSVP_TB_OUT}/fst_wave)
set_tests_properties(reduction.cli.rtl_verify_fst_readable_by_fst2vcd PROPERTIES TIMEOUT 60
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)
nvsvp_testbench_cli_test(rtl_verify_wave_needs_vcd_or_fst_exits_2 --exit 2
  --stderr "--wave run.ghw: expected a file name ending in .vcd or .fst"
  -- $<TARGET_FILE:nvsvp> rtl-verify --random-only --wave run.ghw)
nvsvp_testbench_cli_test(rtl_verify_wave_window_needs_a_wave_exits_2 --exit 2
  --stderr "--wave-from and --wave-to bound a waveform: they need --wave"
  -- $<TARGET_FILE:nvsvp> rtl-verify --random-only --wave-from 10)
nvsvp_testbench_cli_test(rtl_verify_empty_wave_window_exits_2 --exit 2
  --stderr "--wave-from 50 ns: expected a time below --wave-to 50 ns"
  -- $<TARGET_FILE:nvsvp> rtl-verify --random-only --wave ${NVSVP_TB_OUT}/empty.fst --wave-from 50 --wave-to 50)
nvsvp_testbench_cli_test(rtl_verify_wave_and_vcd_exit_2 --exit 2 --stderr "--wave and --vcd exclude each other"
  -- $<TARGET_FILE:nvsvp> rtl-verify --random-only --wave ${NVSVP_TB_OUT}/a.fst --vcd ${NVSVP_TB_OUT}/a.vcd)
nvsvp_testbench_cli_test(rtl_verify_wave_after_the_run_says_so --fresh ${NVSVP_TB_OUT}/late
  --stdout "^  the waveform holds no clock: the run ended at [0-9]+ ns, before --wave-from 100000000 ns$"
  --stdout "^rtl-verify: passed$"
  -- bash -c "mkdir -p ${NVSVP_TB_OUT}/late && exec \"$0\" rtl-verify --random-only --seed 3 --beats 10 --wave ${NVSVP_TB_OUT}/late/w.vcd --wave-from 100000000"
     $<TARGET_FILE:nvsvp>)

# Coverage files: two seeds merged equal their union; verilator_coverage reads and merges them.
add_test(NAME reduction.cli.rtl_coverage_merge_of_two_seeds_is_their_union
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/coverage_merge.sh $<TARGET_FILE:nvsvp> ${NVSVP_TB_OUT}/coverage_merge)
set_tests_properties(reduction.cli.rtl_coverage_merge_of_two_seeds_is_their_union PROPERTIES TIMEOUT 60
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)
nvsvp_testbench_cli_test(rtl_verify_coverage_file_needs_the_random_run_exits_2 --exit 2
  --stderr "--coverage-file records the coverage of the random regression"
  -- $<TARGET_FILE:nvsvp> rtl-verify --directed-only --coverage-file ${NVSVP_TB_OUT}/directed.dat)
nvsvp_testbench_cli_test(rtl_verify_unwritable_coverage_file_exits_2 --exit 2
  --stderr "--coverage-file /nonexistent-directory/c.dat: cannot open it for writing"
  -- $<TARGET_FILE:nvsvp> rtl-verify --random-only --coverage-file /nonexistent-directory/c.dat)
nvsvp_testbench_cli_test(rtl_coverage_merge_not_a_coverage_file_exits_2 --exit 2
  --stderr "malformed.txt:1: expected the header of Verilator's coverage data format '# SystemC::Coverage-3'"
  -- $<TARGET_FILE:nvsvp> rtl-coverage-merge ${NVSVP_TB_VECTORS}/malformed.txt)
nvsvp_testbench_cli_test(rtl_coverage_merge_bad_point_exits_2 --exit 2
  --stderr "bad_point.dat:2: expected a coverage point \"C '<key>' <count>\""
  -- bash -c "mkdir -p ${NVSVP_TB_OUT} && printf '# SystemC::Coverage-3\\nC broken 3\\n' > ${NVSVP_TB_OUT}/bad_point.dat && exec \"$0\" rtl-coverage-merge ${NVSVP_TB_OUT}/bad_point.dat"
     $<TARGET_FILE:nvsvp>)
nvsvp_testbench_cli_test(rtl_coverage_merge_unknown_bin_exits_2 --exit 2
  --stderr "unknown_bin.dat:2: a point of nvsvp_reduction_unit_functional_coverage named 'add f16 huge C=2 kept': expected the name of a bin"
  -- bash -c "mkdir -p ${NVSVP_TB_OUT} && printf '# SystemC::Coverage-3\\nC \\047\\001f\\002nvsvp_reduction_unit_functional_coverage\\001o\\002add f16 huge C=2 kept\\047 3\\n' > ${NVSVP_TB_OUT}/unknown_bin.dat && exec \"$0\" rtl-coverage-merge ${NVSVP_TB_OUT}/unknown_bin.dat"
     $<TARGET_FILE:nvsvp>)
nvsvp_testbench_cli_test(rtl_coverage_merge_missing_file_exits_2 --exit 2 --stderr "no-such.dat: cannot open the coverage file"
  -- $<TARGET_FILE:nvsvp> rtl-coverage-merge ${NVSVP_TB_OUT}/no-such.dat)
nvsvp_testbench_cli_test(rtl_verify_negative_wave_from_exits_2 --exit 2 --stderr "--wave-from"
  -- $<TARGET_FILE:nvsvp> rtl-verify --random-only --wave ${NVSVP_TB_OUT}/negative.vcd --wave-from -5)
