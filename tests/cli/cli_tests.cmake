# End-to-end tests of the `nvsvp` command: exit codes (0 ok, 1 a run-time check failed, 2 bad
# input or usage), messages, report files and determinism. Each runs a small scenario in seconds.
set(NVSVP_CLI_DIR ${CMAKE_CURRENT_LIST_DIR})
set(NVSVP_CLI_DATA ${CMAKE_CURRENT_LIST_DIR}/../data)
set(NVSVP_CLI_OUT ${CMAKE_CURRENT_BINARY_DIR}/cli_out)
set(NVSVP_SCENARIOS ${PROJECT_SOURCE_DIR}/configs/scenarios)

# nvsvp_cli_test(NAME <expect.sh options> -- <nvsvp arguments>)
function(nvsvp_cli_test name)
  add_test(NAME cli.${name}
           COMMAND bash ${NVSVP_CLI_DIR}/expect.sh ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES TIMEOUT 60 WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
                       ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)
endfunction()

set(NVSVP_PRESET_CHECKS)
foreach(preset dgx-h100 gh200-nvl32 nvl64 hgx-h800 gb200-nvl72 hgx-b200 S M L gpt-oss-120b qwen3-235b deepseek-v4-pro-like)
  list(APPEND NVSVP_PRESET_CHECKS --stdout "^(platform|model) +${preset} ")
endforeach()
# The registry's schemes as presets lists them: name, the multicast it needs, a summary.
foreach(scheme deepep deepep-ll nvls dysharp-basic explicit-addressing-basic tutel fastermoe ccfuser comet fusion-only
               dysharp-comet explicit-addressing dysharp)
  list(APPEND NVSVP_PRESET_CHECKS --stdout "^scheme  ${scheme}  multicast:(none|groups|dynamic)  [A-Za-z]")
endforeach()
list(APPEND NVSVP_PRESET_CHECKS --stdout "^step-scheme  dualpipe  multicast:none  .*in a training step only")
nvsvp_cli_test(presets_lists_every_preset_and_scheme ${NVSVP_PRESET_CHECKS} -- $<TARGET_FILE:nvsvp> presets)

nvsvp_cli_test(validate_default --stdout "default.yaml: ok"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml)
# tutel and fastermoe's NCCL channels must leave the GEMMs an SM; coarse-overlap's key is gone.
nvsvp_cli_test(nccl_channels_above_the_sms_exits_2 --exit 2
               --stderr "software.nccl_channels: expected nccl_channels below the GPU's SMs"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml --set "schemes=[tutel]"
               --set software.nccl_channels=200)
nvsvp_cli_test(overlap_chunks_is_unknown_exits_2 --exit 2 --stderr "software.overlap_chunks: expected one of the keys"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml --set software.overlap_chunks=4)

nvsvp_cli_test(validate_unknown_key_exits_2 --exit 2
               --stderr "bad_unknown_key.yaml:6: workload.tokens_per_gpuu: .*unknown key tokens_per_gpuu"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_CLI_DATA}/bad_unknown_key.yaml)

nvsvp_cli_test(validate_missing_file_exits_2 --exit 2 --stderr "no-such-scenario.yaml"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_CLI_DATA}/no-such-scenario.yaml)

nvsvp_cli_test(run_missing_file_exits_2 --exit 2
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/no-such-scenario.yaml --out ${NVSVP_CLI_OUT}/missing)

nvsvp_cli_test(no_subcommand_exits_2 --exit 2 --stderr "subcommand"
               -- $<TARGET_FILE:nvsvp>)

nvsvp_cli_test(unknown_subcommand_exits_2 --exit 2 -- $<TARGET_FILE:nvsvp> frobnicate)

nvsvp_cli_test(bad_set_value_exits_2 --exit 2
               --stderr "--set workload.tokens_per_gpu=abc.*expected an integer"
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml
                  --set workload.tokens_per_gpu=abc --out ${NVSVP_CLI_OUT}/bad_set)

nvsvp_cli_test(malformed_set_exits_2 --exit 2 --stderr "expected a.b.c=value"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_CLI_DATA}/small_uniform.yaml --set noequals)

# The trace example runs, passes its checks and writes both report files with the keys the
# documentation promises.
set(NVSVP_TRACE_OUT ${NVSVP_CLI_OUT}/trace_example)
set(NVSVP_REPORT_CHECKS)
foreach(key results scheme layer_time_us traffic_bytes gpu_to_switch switch_to_gpu payload_bytes
            utilization token_copies_expected token_copies_delivered combine_errors passed
            wall_seconds transactions peak_rss_mb)
  list(APPEND NVSVP_REPORT_CHECKS --file ${NVSVP_TRACE_OUT}/report.json "\"${key}\": ")
endforeach()
nvsvp_cli_test(run_trace_example_writes_the_report --fresh ${NVSVP_TRACE_OUT}
               --stdout "deepep .* ok" --stdout "report: .*report.json"
               ${NVSVP_REPORT_CHECKS}
               --file ${NVSVP_TRACE_OUT}/report.json "\"passed\": true"
               --file ${NVSVP_TRACE_OUT}/report.json "\"combine_errors\": 0,"
               --file ${NVSVP_TRACE_OUT}/links_deepep.csv
                      "^direction,gpu,link,chip,port,messages,packets,wire_bytes,payload_bytes,busy_us,utilization$"
               --file ${NVSVP_TRACE_OUT}/links_deepep.csv "^switch_to_gpu,7,17,3,"
               --file ${NVSVP_TRACE_OUT}/utilization_deepep.csv "^time_us,gpu_to_switch,switch_to_gpu,gpu0_to_switch,"
               --file ${NVSVP_TRACE_OUT}/trace_deepep.json "^.\"displayTimeUnit\":\"ns\",\"traceEvents\":..\"args\":"
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_SCENARIOS}/trace_example.yaml --out ${NVSVP_TRACE_OUT})

# --no-timelines: report.json and the links CSV, no utilization CSV or trace.
set(NVSVP_NO_TIMELINES ${NVSVP_CLI_OUT}/no_timelines)
nvsvp_cli_test(run_no_timelines_writes_no_timeline_files --fresh ${NVSVP_NO_TIMELINES}
               --file ${NVSVP_NO_TIMELINES}/report.json "\"passed\": true"
               --file ${NVSVP_NO_TIMELINES}/links_deepep.csv "^gpu_to_switch,0,0,"
               --absent ${NVSVP_NO_TIMELINES}/utilization_deepep.csv
               --absent ${NVSVP_NO_TIMELINES}/trace_deepep.json
               --absent ${NVSVP_NO_TIMELINES}/occupancy_deepep.csv
               --file ${NVSVP_NO_TIMELINES}/stats_deepep.csv "^gpu_link_engine,gpu_to_switch,0,0,"
               --file ${NVSVP_NO_TIMELINES}/latency_deepep.csv "^class,bin_start_ns,bin_end_ns,messages$"
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml --quiet --no-timelines
                  --set workload.tokens_per_gpu=16 --out ${NVSVP_NO_TIMELINES})

# The statistics: report.json's section, stats_<scheme>.csv (a row per link, direction and VC
# class), latency_<scheme>.csv (the header another tool reads) and occupancy_<scheme>.csv.
set(NVSVP_STATS_OUT ${NVSVP_CLI_OUT}/statistics)
set(NVSVP_STATS_CHECKS)
foreach(key statistics latency_ns p50 p90 p99 hops credit_stall_us arbitration_wait_us switch_ports
            input_buffer_mean_flits reduction_buffer evictions)
  list(APPEND NVSVP_STATS_CHECKS --file ${NVSVP_STATS_OUT}/report.json "\"${key}\": ")
endforeach()
nvsvp_cli_test(run_writes_the_statistics --fresh ${NVSVP_STATS_OUT}
               ${NVSVP_STATS_CHECKS}
               --file ${NVSVP_STATS_OUT}/stats_deepep.csv
                      "^component,direction,gpu,link,chip,port,vc_class,messages,packets,wire_flits,queueing_mean_ns,queueing_max_ns,credit_stall_us,arbitration_wait_us,input_buffer_mean_flits,input_buffer_max_flits$"
               --file ${NVSVP_STATS_OUT}/stats_deepep.csv "^gpu_link_engine,gpu_to_switch,0,0,0,0,request,[1-9]"
               --file ${NVSVP_STATS_OUT}/stats_deepep.csv "^switch_output,switch_to_gpu,0,0,0,0,response,0,0,"
               --file ${NVSVP_STATS_OUT}/latency_deepep.csv "^class,bin_start_ns,bin_end_ns,messages$"
               --file ${NVSVP_STATS_OUT}/latency_deepep.csv "^write,[0-9.]+,[0-9.]+,[1-9][0-9]*$"
               --file ${NVSVP_STATS_OUT}/occupancy_deepep.csv
                      "^time_us,switch0_input_mean_flits,switch0_input_max_flits,switch0_reduction_mean_bytes,switch0_reduction_max_bytes"
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml --quiet
                  --set workload.tokens_per_gpu=16 --out ${NVSVP_STATS_OUT})

# An output directory that cannot be made is bad input (exit 2) that names it.
nvsvp_cli_test(run_unwritable_output_directory_exits_2 --exit 2
               --stderr "nvsvp: command line: --out: expected an output folder nvsvp can create and write, got /dev/null/out \\(Not a directory\\)"
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml --quiet
                  --set workload.tokens_per_gpu=16 --out /dev/null/out)

# --set reaches the run: the fixture has 32 tokens per GPU, the report shows 16.
nvsvp_cli_test(run_set_changes_the_workload --fresh ${NVSVP_CLI_OUT}/set_tokens
               --file ${NVSVP_CLI_OUT}/set_tokens/report.json "\"tokens_per_gpu\": 16,"
               --file ${NVSVP_CLI_OUT}/set_tokens/report.json "\"tokens\": 128,?$"
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml --quiet
                  --set workload.tokens_per_gpu=16 --out ${NVSVP_CLI_OUT}/set_tokens)

# A run stopped by the simulated-time limit fails (exit 1) and says what is stuck.
nvsvp_cli_test(run_time_limit_exits_1_and_reports_stuck_work --exit 1
               --stdout "FAILED" --stdout "simulated-time limit of 5 us"
               --stdout "platform.gpu_[0-9]+: [0-9]+ of [0-9]+ tasks not done"
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml
                  --set simulation.max_time_us=5 --out ${NVSVP_CLI_OUT}/time_limit)

# --dump prints a scenario on stdout (the status line on stderr) that validates and runs to the
# same report; the runs write it as their scenario.yaml. Also with presets given as files.
add_test(NAME cli.validate_dump_round_trip
         COMMAND bash ${NVSVP_CLI_DIR}/dump_round_trip.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/dump_round_trip --set workload.tokens_per_gpu=16)
add_test(NAME cli.validate_dump_round_trip_with_path_presets
         COMMAND bash ${NVSVP_CLI_DIR}/dump_round_trip.sh $<TARGET_FILE:nvsvp>
                 ${NVSVP_CLI_DATA}/path_presets/scenario.yaml ${NVSVP_CLI_OUT}/dump_round_trip_path_presets)
set_tests_properties(cli.validate_dump_round_trip cli.validate_dump_round_trip_with_path_presets
                     PROPERTIES TIMEOUT 60 ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# Two runs in separate processes give identical reports except host measurements.
add_test(NAME cli.runs_are_deterministic
         COMMAND bash ${NVSVP_CLI_DIR}/determinism.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/determinism)
set_tests_properties(cli.runs_are_deterministic PROPERTIES TIMEOUT 120
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)
# The same for every scheme: static and dynamic multimem (Hub allocation order, switch
# reductions), the two-stream tutel and fastermoe, the pull of ccfuser and the four-stream fused schedules (items taken as
# they become ready).
add_test(NAME cli.every_scheme_is_deterministic
         COMMAND bash ${NVSVP_CLI_DIR}/determinism.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/determinism_all_schemes
                 --every-scheme)
set_tests_properties(cli.every_scheme_is_deterministic PROPERTIES TIMEOUT 120
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)
# And with hot-expert replication (the scheduler, the broadcasts, the re-routed tokens), which
# every scheme runs on and passes its checks with.
add_test(NAME cli.every_scheme_with_replication_is_deterministic
         COMMAND bash ${NVSVP_CLI_DIR}/determinism.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_replication.yaml
                 ${NVSVP_CLI_OUT}/determinism_replication
                 --every-scheme
                 --set software.tutel_degree=2)  # one tutel run: the search's determinism is the test above's
set_tests_properties(cli.every_scheme_with_replication_is_deterministic PROPERTIES TIMEOUT 300
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# Link faults (docs/configuration.md#faults): every scheme passes its checks under bit errors and
# credit loss, with firmware's view of them equal to the links'; and runs with faults stay
# deterministic (the corruption draws are seeded).
add_test(NAME cli.every_scheme_passes_under_link_faults
         COMMAND bash ${NVSVP_CLI_DIR}/faults_every_scheme.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/faults_every_scheme)
add_test(NAME cli.runs_with_faults_are_deterministic
         COMMAND bash ${NVSVP_CLI_DIR}/determinism.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/determinism_faults --set "schemes=[deepep,nvls,dysharp]"
                 --set "faults=[{kind: bit_errors, rate_per_flit: 1.0e-4}, {kind: credit_loss, gpu: 1, link: 2, at_us: 1, credits: 200}]")
# Link and chip outages: every scheme recovers (firmware retires the link, or the chip, and has
# what a dead chip lost re-issued) and passes its checks; with every chip down the run exits 1.
add_test(NAME cli.every_scheme_recovers_from_link_and_chip_outages
         COMMAND bash ${NVSVP_CLI_DIR}/outages_every_scheme.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/outages_every_scheme)
# Every scheme on the packet fabric, with and without faults, and partitioned.
add_test(NAME cli.packet_fabric_every_scheme_passes
         COMMAND bash ${NVSVP_CLI_DIR}/packet_fabric_every_scheme.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/packet_fabric_every_scheme)
# The fast fabric against the packet fabric on small cases: links equal, layer within 1 %, each
# GPU's finish within 2 %, every check passing on both (nvsvp compare --tolerance).
add_test(NAME cli.fast_fabric_agrees_with_the_packet_fabric
         COMMAND bash ${NVSVP_CLI_DIR}/fast_fabric_agrees.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/fast_fabric_agrees)
# --trace on the fast fabric: a row per packet, the packet fabric's packets on every traced link.
add_test(NAME cli.fast_fabric_traces_the_packet_fabrics_packets
         COMMAND bash ${NVSVP_CLI_DIR}/fast_fabric_traces.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/fast_fabric_traces)
# The calibration cases at reduced size: the fast fabric's figures within 2 % of the packet fabric's.
add_test(NAME cli.fast_fabric_agrees_on_the_calibration_cases
         COMMAND bash ${NVSVP_CLI_DIR}/fast_fabric_anchors.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_OUT}/fast_fabric_anchors)
# Expert weights in fp8, fp4 and bf16 with hot-expert replication: the broadcasts carry 0.5625x
# and 2x the fp8 run's bytes for the same replicas, and every run passes its checks.
add_test(NAME cli.weight_dtype_scales_the_replication_broadcasts
         COMMAND bash ${NVSVP_CLI_DIR}/weight_dtype_replication.sh $<TARGET_FILE:nvsvp>
                 ${NVSVP_CLI_DATA}/small_replication.yaml ${NVSVP_CLI_OUT}/weight_dtype_replication)
# A replication stream: none, static and iser over a drifting routing's iterations, each policy's
# rows recomputed from stream.csv; deterministic; a longer-lived hot set keeps more replicas.
add_test(NAME cli.replication_stream_compares_the_policies_per_iteration
         COMMAND bash ${NVSVP_CLI_DIR}/replication_stream.sh $<TARGET_FILE:nvsvp>
                 ${NVSVP_CLI_DATA}/small_stream.yaml ${NVSVP_CLI_OUT}/replication_stream)
# A replication stream over routing traces, one file per layer and iteration: each row's excess
# before balancing recomputed from its file; iser keeps only last iteration's replicas; deterministic.
add_test(NAME cli.replication_stream_reads_one_trace_per_layer_and_iteration
         COMMAND bash ${NVSVP_CLI_DIR}/replication_stream_traces.sh $<TARGET_FILE:nvsvp>
                 ${NVSVP_CLI_OUT}/replication_stream_traces)
# gpu.link_interleave: writes to many peers at the same offsets share a few links by their local
# address, and spread over every link by their fabric address.
add_test(NAME cli.link_interleave_spreads_many_peers_over_every_link
         COMMAND bash ${NVSVP_CLI_DIR}/link_interleave.sh $<TARGET_FILE:nvsvp>
                 ${NVSVP_CLI_DATA}/many_peer_all_to_all.yaml ${NVSVP_CLI_OUT}/link_interleave)
# The Blackwell presets: every scheme on gb200-nvl72 and hgx-b200 passes its checks; replication
# multicasts to a group of all 72 GPUs.
add_test(NAME cli.every_scheme_runs_on_the_blackwell_presets
         COMMAND bash ${NVSVP_CLI_DIR}/blackwell_presets.sh $<TARGET_FILE:nvsvp>
                 ${NVSVP_CLI_DATA}/small_uniform.yaml ${NVSVP_CLI_OUT}/blackwell_presets)
# Partitions: two layers in one simulation, each equal to its run alone but for time.
add_test(NAME cli.partitions_each_run_as_alone
         COMMAND bash ${NVSVP_CLI_DIR}/partitions_run_alone.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_DATA}/small_replication.yaml ${NVSVP_CLI_OUT}/partitions_run_alone)
add_test(NAME cli.partitioned_runs_are_deterministic
         COMMAND bash ${NVSVP_CLI_DIR}/determinism.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/determinism_partitions --set "schemes=[deepep,nvls,comet]"
                 --set "partitions=[[0, 1, 2, 3], [4, 5, 6, 7]]")
add_test(NAME cli.runs_with_outages_are_deterministic
         COMMAND bash ${NVSVP_CLI_DIR}/determinism.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/determinism_outages --set "schemes=[deepep,nvls,dysharp]"
                 --set "faults=[{kind: chip_down, chip: 1, at_us: 10}, {kind: link_down, gpu: 3, link: 0, at_us: 5, up_at_us: 9}]")
set_tests_properties(cli.every_scheme_passes_under_link_faults cli.runs_with_faults_are_deterministic
                     cli.every_scheme_runs_on_the_blackwell_presets
                     cli.every_scheme_recovers_from_link_and_chip_outages cli.runs_with_outages_are_deterministic
                     cli.partitions_each_run_as_alone cli.partitioned_runs_are_deterministic
                     PROPERTIES TIMEOUT 300 ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# Corners of the fabric's parameters: every token copy and combine result must still be right and
# nothing may deadlock (a sweep of 216 combinations passed; these keep the extremes in the suite).
set(NVSVP_CORNERS
    "one_shallow_vc|platform.switch.vcs_per_class=1|platform.switch.vc_depth_flits=16|platform.gpu.rx_vc_depth_flits=16"
    "one_deep_vc|platform.switch.vcs_per_class=1|platform.switch.vc_depth_flits=4096|platform.gpu.tx_lookahead_ns=0"
    "fixed_priority_slow_crossbar|platform.switch.arbiter=fixed_priority|platform.switch.crossbar_speedup=0.5|platform.switch.latency_ns=150"
    "oldest_first_nvl32|platform.preset=gh200-nvl32|platform.switch.arbiter=oldest_first|platform.switch.vcs_per_class=2|workload.tokens_per_gpu=16")
# A corner "name|key=value|...": sets CORNER_NAME and CORNER_SETS (its --set arguments).
function(nvsvp_parse_corner corner)
  string(REPLACE "|" ";" fields "${corner}")
  list(POP_FRONT fields name)
  set(sets)
  foreach(setting ${fields})
    list(APPEND sets --set ${setting})
  endforeach()
  set(CORNER_NAME ${name} PARENT_SCOPE)
  set(CORNER_SETS ${sets} PARENT_SCOPE)
endfunction()
foreach(corner ${NVSVP_CORNERS})
  nvsvp_parse_corner("${corner}")
  nvsvp_cli_test(fabric_corner_${CORNER_NAME} --stdout "deepep .* ok"
                 -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml ${CORNER_SETS}
                    --out ${NVSVP_CLI_OUT}/corner_${CORNER_NAME})
endforeach()

# The same for the multimem schemes: tight buffers, a reduction buffer too small for one partial
# (every reduction passes partials on), a 32-GPU fabric with a one-entry source queue and an
# 8-entry direct-mapped Hub cache.
set(NVSVP_MULTIMEM_CORNERS
    "one_shallow_vc|platform.switch.vcs_per_class=1|platform.switch.vc_depth_flits=16|platform.gpu.rx_vc_depth_flits=16"
    "evicting_reduction_buffer|platform.switch.reduction_buffer_bytes=256|platform.gpu.load_bytes_in_flight_per_link=1048576"
    "tiny_queue_and_hub_nvl32|platform.preset=gh200-nvl32|platform.switch.vcs_per_class=2|workload.tokens_per_gpu=16|platform.gpu.source_queue_entries=1|platform.gpu.hub_cache_entries=8|platform.gpu.hub_cache_ways=1")
foreach(corner ${NVSVP_MULTIMEM_CORNERS})
  nvsvp_parse_corner("${corner}")
  nvsvp_cli_test(multimem_corner_${CORNER_NAME}
                 --stdout "^nvls .* ok$" --stdout "^dysharp-basic .* ok$" --stdout "^explicit-addressing .* ok$"
                 --stdout "^dysharp .* ok$" --stdout "^fusion-only .* ok$" --stdout "^explicit-addressing-basic .* ok$"
                 -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml ${CORNER_SETS}
                    "--set" "schemes=[nvls,dysharp-basic,explicit-addressing-basic,explicit-addressing,fusion-only,dysharp]"
                    --out ${NVSVP_CLI_OUT}/multimem_corner_${CORNER_NAME})
endforeach()

nvsvp_cli_test(comm_sms_must_leave_gemm_sms_exits_2 --exit 2
               --stderr "software.comm_sms: expected comm_sms below the GPU's SMs"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml --set software.comm_sms=132)

nvsvp_cli_test(fusion_groups_must_fit_the_gpu_exits_2 --exit 2
               --stderr "software.fusion_gemm1_sms: expected the fused kernel's four SM groups within the GPU's SMs, got 157 of 132 SMs"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml --set software.fusion_gemm1_sms=100)

nvsvp_cli_test(readiness_table_needs_an_entry_exits_2 --exit 2
               --stderr "platform.gpu.readiness_entries: expected an integer in \\[1, 16777216\\], got 0"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml --set platform.gpu.readiness_entries=0)

nvsvp_cli_test(timeline_bin_below_a_nanosecond_exits_2 --exit 2
               --stderr "simulation.timeline_bin_us: expected at least 0.001 \\(1 ns\\), got 0.0001"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml --set simulation.timeline_bin_us=0.0001)

nvsvp_cli_test(pure_communication_needs_a_boolean_exits_2 --exit 2
               --stderr "pure_communication: expected true or false, got maybe"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml --set pure_communication=maybe)

nvsvp_cli_test(hub_cache_in_whole_sets_exits_2 --exit 2
               --stderr "platform.gpu.hub_cache_entries: expected hub_cache_entries a multiple of hub_cache_ways"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml
                  --set platform.gpu.hub_cache_entries=100 --set platform.gpu.hub_cache_ways=8)

nvsvp_cli_test(chunk_tokens_out_of_range_exits_2 --exit 2
               --stderr "software.chunk_tokens: expected an integer in \\[1, 64\\], got 0"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml --set software.chunk_tokens=0)

nvsvp_cli_test(chunk_larger_than_a_message_carries_exits_2 --exit 2
               --stderr "software.chunk_tokens: expected chunk_tokens x functional_bytes <= 1024"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml
                  --set software.chunk_tokens=64 --set platform.gpu.functional_bytes=32)

nvsvp_cli_test(rtl_reduction_needs_the_default_buffer_exits_2 --exit 2
               --stderr "expected 65536 with reduction_backend rtl"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml
                  --set platform.switch.reduction_backend=rtl --set platform.switch.reduction_buffer_bytes=32768)

nvsvp_cli_test(unknown_reduction_backend_exits_2 --exit 2
               --stderr "platform.switch.reduction_backend: expected one of model, rtl, both"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml
                  --set platform.switch.reduction_backend=verilog)

# Studies (`nvsvp study`): a bad study file exits 2 naming the file, line, key (and point) before
# any point runs; a run writes a row per point and scheme, summary.json and every point's files;
# a point whose run fails makes the study exit 1 while the others still run; the CSV does not
# depend on --jobs; the shipped examples run.
set(NVSVP_STUDIES ${NVSVP_CLI_DATA}/studies)
set(NVSVP_STUDY_OUT ${NVSVP_CLI_OUT}/studies)

nvsvp_cli_test(study_unknown_key_exits_2 --exit 2
               --stderr "bad_unknown_key.yaml:5: sweeep: expected one of the keys .*, sweep, points, timelines, got unknown key sweeep"
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/bad_unknown_key.yaml --out ${NVSVP_STUDY_OUT}/unknown_key)

nvsvp_cli_test(study_reference_not_among_the_schemes_exits_2 --exit 2
               --stderr "bad_reference.yaml:4: reference: expected one of the study's schemes deepep, dysharp-basic, got nvls$"
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/bad_reference.yaml --out ${NVSVP_STUDY_OUT}/reference)

nvsvp_cli_test(study_bad_point_value_exits_2_before_any_point_runs --exit 2
               --fresh ${NVSVP_STUDY_OUT}/bad_point --absent ${NVSVP_STUDY_OUT}/bad_point
               --stderr "bad_point_value.yaml: point top_k=0: .*bad_point_value.yaml:7: workload.top_k: expected an integer in \\[1, 64\\], got 0$"
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/bad_point_value.yaml --out ${NVSVP_STUDY_OUT}/bad_point)

nvsvp_cli_test(study_zero_jobs_exits_2 --exit 2 --stderr "--jobs: Value 0 not in range 1 to 1024"
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/tiny.yaml --jobs 0)

# tiny.yaml: top_k 2 and 4 from the sweep, then seed 9 (top_k 8 from the base); --set reaches
# every point. A row: point, the two keys, scheme, 10 numbers, the two loads, the Hub hit rate
# and the no-eviction rate (empty for deepep), the 4 of the time breakdown, 5 of replication and
# its `hidden`, checks.passed, speedup (no wall seconds: those are in wall_times.csv).
set(NVSVP_TINY ${NVSVP_STUDY_OUT}/tiny)
set(NVSVP_NUMBER "[0-9.e+-]+")
set(NVSVP_TINY_CHECKS)
foreach(row "top_k=2,2,5,deepep" "top_k=2,2,5,dysharp-basic" "top_k=4,4,5,deepep" "top_k=4,4,5,dysharp-basic"
            "seed=9,8,9,deepep" "seed=9,8,9,dysharp-basic")
  list(APPEND NVSVP_TINY_CHECKS --file ${NVSVP_TINY}/study.csv
       "^${row}(,${NVSVP_NUMBER}){12}(,(${NVSVP_NUMBER})?){2}(,${NVSVP_NUMBER}){4}(,${NVSVP_NUMBER}){5},(true|false),true,,,,,${NVSVP_NUMBER}$")
endforeach()
nvsvp_cli_test(study_runs_two_points_at_a_time --fresh ${NVSVP_TINY}
               --stdout "^study tiny: 3 points x 2 schemes, 2 at a time"
               --stdout "^\\[3/3\\] " --stdout "^top_k=4 +${NVSVP_NUMBER} +${NVSVP_NUMBER} +${NVSVP_NUMBER} +ok$"
               --stdout "^deepep +3 +${NVSVP_NUMBER} +${NVSVP_NUMBER} +(top_k=[24]|seed=9)$"
               --file ${NVSVP_TINY}/study.csv "^point,workload.top_k,workload.routing.seed,scheme,layer_time_us,ideal_comm_time_us,comm_efficiency,traffic_bytes.gpu_to_switch,traffic_bytes.switch_to_gpu,payload_bytes.gpu_to_switch,payload_bytes.switch_to_gpu,utilization.gpu_to_switch,utilization.switch_to_gpu,payload_efficiency.total,load.max_mean_gpu,load.max_mean_expert,hub.cache_hit_rate,switch.reduction_no_eviction_rate,time_breakdown.comm_only_us,time_breakdown.compute_only_us,time_breakdown.overlap_us,time_breakdown.idle_us,replication.max_mean_before,replication.max_mean_after,replication.excess_load_removed,replication.broadcast_time_us,replication.shared_expert_time_us,replication.hidden,checks.passed,faults.slowdown,faults.replays.packets,faults.replays.bytes,faults.credit_loss.resyncs,speedup_of_reference$"
               ${NVSVP_TINY_CHECKS}
               --file ${NVSVP_TINY}/study.csv "^top_k=2,2,5,dysharp-basic,.*,1$"
               --file ${NVSVP_TINY}/summary.json "\"geometric_mean\": ${NVSVP_NUMBER},"
               --file ${NVSVP_TINY}/summary.json "\"passed\": true"
               --file ${NVSVP_TINY}/summary.json "^    \"command_line\": \"nvsvp study [^ ]*/tiny.yaml --set workload.tokens_per_gpu=8\",$"
               --file ${NVSVP_TINY}/summary.json "^      \"directory\": \"3_seed=9\",$"
               --file ${NVSVP_TINY}/wall_times.csv "^point,host,wall_seconds$"
               --file ${NVSVP_TINY}/wall_times.csv "^seed=9,[^,]+,${NVSVP_NUMBER}$"
               --file ${NVSVP_TINY}/study.json "^  \"fingerprint\": \"[0-9a-f]{16}\",$"
               --file ${NVSVP_TINY}/3_seed=9/point.json "^  \"number\": 3,$"
               --file ${NVSVP_TINY}/3_seed=9/report.json "^    \"command_line\": \"/[^ ]*nvsvp --config-dir [^ ]+ run [^ ]*/3_seed=9/scenario.yaml "
               --file ${NVSVP_TINY}/3_seed=9/scenario.yaml "^name: tiny "
               --file ${NVSVP_TINY}/3_seed=9/report.json "\"tokens_per_gpu\": 8,"
               --file ${NVSVP_TINY}/3_seed=9/run.log "^report: "
               --file ${NVSVP_TINY}/3_seed=9/links_deepep.csv "^direction,"
               --absent ${NVSVP_TINY}/3_seed=9/utilization_deepep.csv
               --absent ${NVSVP_TINY}/3_seed=9/trace_deepep.json
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/tiny.yaml --jobs 2 --set workload.tokens_per_gpu=8
                  --out ${NVSVP_TINY})

# Points start dearest first (tokens times the GPUs a token reaches): with one job, seed=9
# (top_k 8) runs before top_k=4 and top_k=2; the CSV keeps the study's order.
nvsvp_cli_test(study_starts_the_dearest_point_first --fresh ${NVSVP_STUDY_OUT}/order
               --stdout "^\\[1/3\\] seed=9: ok" --stdout "^\\[2/3\\] top_k=4: ok" --stdout "^\\[3/3\\] top_k=2: ok"
               --file ${NVSVP_STUDY_OUT}/order/study.csv "^top_k=2,2,5,deepep,"
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/tiny.yaml --jobs 1 --set workload.tokens_per_gpu=8
                  --out ${NVSVP_STUDY_OUT}/order)

set(NVSVP_FAILS ${NVSVP_STUDY_OUT}/one_point_fails)
nvsvp_cli_test(study_failed_point_exits_1_and_the_others_run --exit 1 --fresh ${NVSVP_FAILS}
               --stdout "^\\[2/2\\] max_time_us=5: FAILED \\(exit status 1\\), output in .*/2_max_time_us=5/run.log"
               --stdout "^point max_time_us=5 FAILED: exit status 1"
               --file ${NVSVP_FAILS}/study.csv "^max_time_us=10000,10000,dysharp-basic,.*,true,,,,,1$"
               --file ${NVSVP_FAILS}/study.csv "^max_time_us=5,5,deepep,.*,false,,,,,$"
               --file ${NVSVP_FAILS}/2_max_time_us=5/run.log "simulated-time limit of 5 us"
               --file ${NVSVP_FAILS}/summary.json "\"failure\": \"exit status 1\""
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/one_point_fails.yaml --set workload.tokens_per_gpu=8
                  --out ${NVSVP_FAILS})

# The same over an --sshlogin host: the test's own sshd on loopback (skipped, saying why, where
# sshd cannot start).
add_test(NAME cli.study_over_ssh_hosts_is_the_same
         COMMAND bash ${NVSVP_CLI_DIR}/study_parallel_ssh.sh $<TARGET_FILE:nvsvp> ${NVSVP_STUDIES}/tiny.yaml 7
                 ${NVSVP_STUDY_OUT}/over_ssh --set workload.tokens_per_gpu=8)
set_tests_properties(cli.study_over_ssh_hosts_is_the_same PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# study-merge: missing and failed points named (exit 1); points of another study, build or
# scenario refused (exit 2), nothing written; a point run into another study's folder refused.
add_test(NAME cli.study_merge_names_missing_points_and_refuses_foreign_ones
         COMMAND bash ${NVSVP_CLI_DIR}/study_merge_refuses.sh $<TARGET_FILE:nvsvp> ${NVSVP_STUDIES}
                 ${NVSVP_STUDY_OUT}/merge_refuses)
set_tests_properties(cli.study_merge_names_missing_points_and_refuses_foreign_ones PROPERTIES TIMEOUT 120
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# --point, --shard and the modes that exclude each other: usage errors exit 2 before anything runs.
nvsvp_cli_test(study_point_beyond_the_study_exits_2 --exit 2
               --stderr "--point: expected a point number from 1 to 3 \\(study tiny\\), got 4$"
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/tiny.yaml --point 4 --out ${NVSVP_STUDY_OUT}/point4)
nvsvp_cli_test(study_point_zero_exits_2 --exit 2 --stderr "--point: expected a point number from 1 to 3"
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/tiny.yaml --point 0 --out ${NVSVP_STUDY_OUT}/point0)
foreach(shard 3/2 0/2 2 a/b 1/0 -1/2)
  string(MAKE_C_IDENTIFIER "${shard}" shard_id)
  nvsvp_cli_test(study_shard_${shard_id}_exits_2 --exit 2
                 --stderr "--shard: expected I/N with 1 <= I <= N \\(shard I of N\\), got ${shard}$"
                 -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/tiny.yaml --shard=${shard} --out ${NVSVP_STUDY_OUT}/shard)
endforeach()
nvsvp_cli_test(study_point_and_shard_exclude_each_other --exit 2 --stderr "--point excludes --shard"
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/tiny.yaml --point 1 --shard 1/2)
nvsvp_cli_test(study_merge_and_out_exclude_each_other --exit 2 --stderr "--(out excludes --merge|merge excludes --out)"
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/tiny.yaml --merge a --out b)
nvsvp_cli_test(study_merge_needs_a_folder --exit 2 --stderr "DIR is required"
               -- $<TARGET_FILE:nvsvp> study-merge)
# --emit-commands: a line per point, absolute paths, --point k on line k, the --set options kept.
nvsvp_cli_test(study_emit_commands_one_line_per_point --fresh ${NVSVP_STUDY_OUT}/emit
               --stdout "^/[^ ]*/nvsvp --config-dir /[^ ]+ study /[^ ]*/tiny.yaml --point 1 --out /[^ ]*/emit --set workload.tokens_per_gpu=8$"
               --stdout "^/[^ ]*/nvsvp --config-dir /[^ ]+ study /[^ ]*/tiny.yaml --point 3 --out /[^ ]*/emit --set workload.tokens_per_gpu=8$"
               --file ${NVSVP_STUDY_OUT}/emit/study.json "^  \"command_line\": \"nvsvp study [^ ]*/tiny.yaml --set workload.tokens_per_gpu=8\",$"
               --absent ${NVSVP_STUDY_OUT}/emit/1_top_k=2
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_STUDIES}/tiny.yaml --emit-commands --set workload.tokens_per_gpu=8
                  --out ${NVSVP_STUDY_OUT}/emit)

# The same study.csv and summary.json however the points run: --jobs 1 or 2, GNU parallel on the
# emitted commands, shards merged by study-merge or study --merge.
add_test(NAME cli.study_is_the_same_however_its_points_run
         COMMAND bash ${NVSVP_CLI_DIR}/study_runs_alike.sh $<TARGET_FILE:nvsvp> ${NVSVP_STUDIES}/tiny.yaml 7
                 ${NVSVP_STUDY_OUT}/alike --set workload.tokens_per_gpu=8)
set_tests_properties(cli.study_is_the_same_however_its_points_run PROPERTIES TIMEOUT 120
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# The same study through a real one-node Slurm (slurm-wlm and munge, started by the test as root):
# a job array and a dependent merge job (scripts/study-slurm.sh), one task per point and in two
# shards; skipped (77) with the reason where Slurm cannot start.
add_test(NAME cli.study_on_slurm_equals_a_local_study
         COMMAND bash ${NVSVP_CLI_DIR}/study_slurm.sh $<TARGET_FILE:nvsvp> ${NVSVP_STUDIES}/tiny.yaml 7
                 ${NVSVP_STUDIES}/one_point_fails.yaml ${NVSVP_STUDY_OUT}/slurm --set workload.tokens_per_gpu=8)
set_tests_properties(cli.study_on_slurm_equals_a_local_study PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# study-slurm.sh's usage errors exit 2 before anything is submitted (no Slurm needed).
set(NVSVP_STUDY_SLURM bash ${PROJECT_SOURCE_DIR}/scripts/study-slurm.sh)
nvsvp_cli_test(study_slurm_without_a_file_exits_2 --exit 2 --stderr "expected the study FILE"
               -- ${NVSVP_STUDY_SLURM} --wait)
nvsvp_cli_test(study_slurm_unknown_option_exits_2 --exit 2 --stderr "--frob: unknown option before the study FILE"
               -- ${NVSVP_STUDY_SLURM} --frob ${NVSVP_STUDIES}/tiny.yaml)
nvsvp_cli_test(study_slurm_shards_not_a_positive_integer_exits_2 --exit 2
               --stderr "--shards: expected a positive integer, got '0'"
               -- ${NVSVP_STUDY_SLURM} --shards 0 ${NVSVP_STUDIES}/tiny.yaml)
nvsvp_cli_test(study_slurm_without_sbatch_exits_2 --exit 2 --stderr "sbatch not found on PATH"
               -- env PATH=/nonexistent /bin/bash ${PROJECT_SOURCE_DIR}/scripts/study-slurm.sh ${NVSVP_STUDIES}/tiny.yaml)

# Every study the project ships loads and checks (its points are listed, not run: the large ones
# take minutes; docs/results.md says how long).
file(GLOB NVSVP_SHIPPED_STUDIES ${PROJECT_SOURCE_DIR}/configs/studies/*.yaml)
foreach(study_file ${NVSVP_SHIPPED_STUDIES})
  get_filename_component(study_name ${study_file} NAME_WE)
  nvsvp_cli_test(study_lists_${study_name} --stdout "^study ${study_name}: [1-9][0-9]* points"
                 -- $<TARGET_FILE:nvsvp> study ${study_file} --list)
endforeach()

foreach(example topk_dgx_h100 platforms)
  nvsvp_cli_test(study_example_${example} --stdout "^\\[[0-9]+/[0-9]+\\] .*: ok" --stdout "^explicit-addressing +[1-9]"
                 -- $<TARGET_FILE:nvsvp> study ${PROJECT_SOURCE_DIR}/configs/studies/${example}.yaml --jobs 2
                    --out ${NVSVP_STUDY_OUT}/${example})
endforeach()

# Hot-expert replication's keys are checked like any other.
nvsvp_cli_test(replication_group_that_does_not_divide_the_gpus_exits_2 --exit 2
               --stderr "replication.groups: expected group sizes that divide the GPU count \\(8\\), each once, got a group of 3"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml --set "replication.groups=[3]")
nvsvp_cli_test(replication_unknown_policy_exits_2 --exit 2
               --stderr "replication.policy: expected one of none, static, iser, got greedy"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml --set replication.policy=greedy)
nvsvp_cli_test(replication_unknown_key_exits_2 --exit 2 --stderr "replication.polcy: .*unknown key polcy"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/default.yaml --set replication.polcy=iser)
# The fixed groups take multicast slots at start-up; too few slots is bad input, found before the
# run starts (the firmware's bring-up on the register models).
nvsvp_cli_test(replication_groups_beyond_the_multicast_slots_fail_clearly --exit 2
               --stderr "platform.switch.multicast_slots: expected enough multicast slots .*no multicast slot left: all 2 slots are in use"
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_SCENARIOS}/default.yaml --set replication.policy=iser
                  --set "replication.groups=[2]" --set platform.switch.multicast_slots=2
                  --set workload.tokens_per_gpu=64 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_out/replication_slots)
nvsvp_cli_test(replication_static_seed_needs_the_static_policy_exits_2 --exit 2
               --stderr "replication.static_seed: expected static_seed only with policy static"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_SCENARIOS}/replication.yaml --set replication.static_seed=3)

# nvsvp anchors (docs/calibration.md): one case runs and writes anchors.json; an unknown case name
# is bad usage.
nvsvp_cli_test(anchors_one_case --stdout "p2p-h100-write-oneway +write bandwidth +GB/s" --stdout "wrote .*anchors.json"
               --fresh ${NVSVP_CLI_OUT}/anchors --file ${NVSVP_CLI_OUT}/anchors/anchors.json "\"case\": \"p2p-h100-write-oneway\""
               --file ${NVSVP_CLI_OUT}/anchors/anchors.json "^    \"git_commit\": \"([0-9a-f]{40}(-dirty)?|unknown)\",$"
               -- $<TARGET_FILE:nvsvp> anchors --case p2p-h100-write-oneway --out ${NVSVP_CLI_OUT}/anchors)
nvsvp_cli_test(anchors_unknown_case_exits_2 --exit 2 --stderr "--case: expected one of .*deepep-h800-ep8-dispatch.*, got no-such-case"
               -- $<TARGET_FILE:nvsvp> anchors --case no-such-case --out ${NVSVP_CLI_OUT}/anchors_bad)

# `nvsvp packet-efficiency`: the payload efficiency per transfer size from the packet formats
# (256 bytes to 8 targets on the presets' link: dysharp 256 / 288 bytes, explicit 256 / 336).
nvsvp_cli_test(packet_efficiency_prints_the_table
               --stdout "^payload_bytes,request_dysharp,request_explicit,response_dysharp,response_explicit$"
               --stdout "^256,0\\.888888888888888[0-9]*,0\\.76190476190476[0-9]*,0\\.94117647058823[0-9]*,0\\.76190476190476[0-9]*$"
               -- $<TARGET_FILE:nvsvp> packet-efficiency ${PROJECT_SOURCE_DIR}/configs/scenarios/default.yaml --targets 8)
nvsvp_cli_test(packet_efficiency_zero_targets_exits_2 --exit 2 --stderr "--targets: Value 0 not in range 1 to 32767"
               -- $<TARGET_FILE:nvsvp> packet-efficiency ${PROJECT_SOURCE_DIR}/configs/scenarios/default.yaml --targets 0)

# A plan the fabric cannot hold is bad input before anything runs (issue 20): each scheme's plan is
# brought up on the register models, so too few multicast slots for nvls's groups, or for the fixed
# groups of hot-expert replication, fail validate and run with exit 2 at the key that sizes them.
nvsvp_cli_test(validate_too_few_multicast_slots_for_nvls_exits_2 --exit 2
               --stderr "command line \\(--set platform.switch.multicast_slots=1\\): platform.switch.multicast_slots: expected enough multicast slots for scheme nvls: 2 groups"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_CLI_DATA}/small_uniform.yaml --set "schemes=[nvls]"
                  --set platform.switch.multicast_slots=1)
nvsvp_cli_test(validate_too_few_multicast_slots_for_replication_exits_2 --exit 2
               --stderr "platform.switch.multicast_slots: expected enough multicast slots for scheme deepep: 7 groups \\(the layer's 0, replication's 7\\)"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_CLI_DATA}/small_replication.yaml
                  --set platform.switch.multicast_slots=6)
nvsvp_cli_test(run_too_few_multicast_slots_exits_2_before_simulating --exit 2
               --stderr "platform.switch.multicast_slots: expected enough multicast slots for scheme nvls"
               --fresh ${NVSVP_CLI_OUT}/too_few_slots --absent ${NVSVP_CLI_OUT}/too_few_slots/report.json
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml --set "schemes=[nvls]"
                  --set platform.switch.multicast_slots=1 --out ${NVSVP_CLI_OUT}/too_few_slots)
nvsvp_cli_test(validate_enough_multicast_slots_for_replication --stdout "small_replication.yaml: ok"
               -- $<TARGET_FILE:nvsvp> validate ${NVSVP_CLI_DATA}/small_replication.yaml
                  --set platform.switch.multicast_slots=7)

# Malformed inputs (issue 20): a table of cases, one defect each, across every section of the
# scenario and study formats, preset and trace files and every --set form; each must exit 2 and
# name the file and line (or the --set) and the key. validate and study --list simulate nothing.
add_test(NAME cli.malformed_inputs_table
         COMMAND bash ${NVSVP_CLI_DIR}/malformed_inputs.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DIR}/malformed_inputs.table)
set_tests_properties(cli.malformed_inputs_table PROPERTIES TIMEOUT 300)

# Out of memory while reading the input or planning the layer is bad input (exit 2) with a message,
# never exit 1 or a crash: 8 GPUs x 2^20 tokens x top-32 under a 300 MB address-space limit.
# (ASan needs an unlimited address space: make sanitize leaves this test out.)
nvsvp_cli_test(out_of_memory_reading_the_layer_exits_2 --exit 2
               --stderr "small_uniform.yaml: expected a layer .* that fits in this machine's memory, got out of memory"
               -- bash -c "ulimit -v 300000 && exec \"$0\" \"$@\"" $<TARGET_FILE:nvsvp> validate ${NVSVP_CLI_DATA}/small_uniform.yaml
                  --set workload.tokens_per_gpu=1048576 --set workload.top_k=32)

# Own files, round trips, hygiene (issue 21; docs/configuration.md).
# Presets given as files, relative to the scenario's folder (or the study's); the report names the
# files used.
set(NVSVP_PATH_PRESETS ${NVSVP_CLI_DATA}/path_presets)
nvsvp_cli_test(run_path_presets_names_the_files --fresh ${NVSVP_CLI_OUT}/path_presets
               --stdout "^scenario path_presets: .*/path_presets/my-box.yaml \\(4 GPUs"
               --file ${NVSVP_CLI_OUT}/path_presets/report.json "\"platform\": \"/.*/tests/data/path_presets/my-box.yaml\","
               --file ${NVSVP_CLI_OUT}/path_presets/report.json "\"model\": \"/.*/tests/data/path_presets/models/my-model.yaml\","
               --file ${NVSVP_CLI_OUT}/path_presets/report.json "\"passed\": true"
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_PATH_PRESETS}/scenario.yaml --out ${NVSVP_CLI_OUT}/path_presets)
nvsvp_cli_test(study_points_name_platform_files --stdout "^study path_presets_study: 2 points"
               -- $<TARGET_FILE:nvsvp> study ${NVSVP_PATH_PRESETS}/study.yaml --list)

# Every report says which nvsvp made it and how it was asked; every run writes its effective
# scenario beside it.
set(NVSVP_BUILD_OUT ${NVSVP_CLI_OUT}/nvsvp_section)
set(NVSVP_COMMIT "([0-9a-f]{40}(-dirty)?|unknown)")
nvsvp_cli_test(run_report_names_the_version_commit_and_command --fresh ${NVSVP_BUILD_OUT}
               --file ${NVSVP_BUILD_OUT}/report.json "^  \"nvsvp\": \\{$"
               --file ${NVSVP_BUILD_OUT}/report.json "^    \"version\": \"${PROJECT_VERSION}\"$"
               --file ${NVSVP_BUILD_OUT}/report.json "^    \"git_commit\": \"${NVSVP_COMMIT}\",$"
               --file ${NVSVP_BUILD_OUT}/report.json
                      "^    \"command_line\": \"[^ ]*nvsvp run [^ ]*/small_uniform.yaml --quiet --set workload.tokens_per_gpu=16 --out [^ ]*/nvsvp_section\",$"
               --file ${NVSVP_BUILD_OUT}/scenario.yaml "^name: small_uniform "
               --file ${NVSVP_BUILD_OUT}/scenario.yaml "^  tokens_per_gpu: 16 "
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml --quiet --set workload.tokens_per_gpu=16
                  --out ${NVSVP_BUILD_OUT})
nvsvp_cli_test(version_prints_the_version_and_commit --stdout "^nvsvp ${PROJECT_VERSION} \\(git ${NVSVP_COMMIT}\\)$"
               -- $<TARGET_FILE:nvsvp> --version)

# A run clears an earlier run's files from its output folder, and no others.
add_test(NAME cli.run_clears_an_earlier_runs_outputs
         COMMAND bash ${NVSVP_CLI_DIR}/output_hygiene.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/hygiene)
set_tests_properties(cli.run_clears_an_earlier_runs_outputs PROPERTIES TIMEOUT 60
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# Presets are found beside the binary, through NVSVP_CONFIG_PATH or --config-dir, never in the
# source tree: a copied binary, and one installed by cmake --install.
add_test(NAME cli.presets_are_found_beside_the_binary_or_through_the_search_path
         COMMAND bash ${NVSVP_CLI_DIR}/config_search.sh $<TARGET_FILE:nvsvp> ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                 ${NVSVP_CLI_OUT}/config_search)
set_tests_properties(cli.presets_are_found_beside_the_binary_or_through_the_search_path PROPERTIES TIMEOUT 120
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# SIGTERM and SIGINT reach every child: a run's scheme process, a study's point runs and theirs.
# The runs are large enough (16384 tokens per GPU, several schemes) to be busy when the signal comes.
add_test(NAME cli.sigterm_stops_a_run_and_its_children
         COMMAND bash ${NVSVP_CLI_DIR}/signals.sh $<TARGET_FILE:nvsvp> TERM 1 ${NVSVP_CLI_OUT}/sigterm_run --
                 run ${NVSVP_CLI_DATA}/small_uniform.yaml --quiet --set workload.tokens_per_gpu=16384
                 "--set" "schemes=[deepep,nvls,dysharp-basic,dysharp,fusion-only,comet]"
                 --out ${NVSVP_CLI_OUT}/sigterm_run/run)
add_test(NAME cli.sigint_stops_a_study_and_every_child
         COMMAND bash ${NVSVP_CLI_DIR}/signals.sh $<TARGET_FILE:nvsvp> INT 2 ${NVSVP_CLI_OUT}/sigint_study --
                 study ${NVSVP_STUDIES}/tiny.yaml --jobs 2 --set workload.tokens_per_gpu=16384
                 --out ${NVSVP_CLI_OUT}/sigint_study/study)
set_tests_properties(cli.sigterm_stops_a_run_and_its_children cli.sigint_stops_a_study_and_every_child
                     PROPERTIES TIMEOUT 120 ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)
# `nvsvp plot` (python3-matplotlib): a run's, a run's without timelines and a study's pictures are
# written, non-empty and valid SVG or PNG, shown in index.html, the same when drawn twice; bad input
# and a Python without matplotlib exit 2 naming what was expected.
add_test(NAME cli.plot_draws_runs_and_studies
         COMMAND bash ${NVSVP_CLI_DIR}/plot.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA} ${NVSVP_CLI_OUT}/plot)
set_tests_properties(cli.plot_draws_runs_and_studies PROPERTIES TIMEOUT 300
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# The progress line on a pseudo-terminal (script(1)): shown by run, study and anchors, not with stderr in a
# file nor with --quiet; the reports are the same either way.
add_test(NAME cli.progress_line_only_on_a_terminal
         COMMAND bash ${NVSVP_CLI_DIR}/progress.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA} ${NVSVP_CLI_OUT}/progress)
set_tests_properties(cli.progress_line_only_on_a_terminal PROPERTIES TIMEOUT 120
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# Logging and tracing per component (--log PATTERN=LEVEL, --trace PATTERN): what they print and
# write, their bad input, and traces that are the same bytes run after run.
add_test(NAME cli.logs_and_traces_of_named_components
         COMMAND bash ${NVSVP_CLI_DIR}/logs_and_traces.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/logs_and_traces)
set_tests_properties(cli.logs_and_traces_of_named_components PROPERTIES TIMEOUT 120
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)
nvsvp_cli_test(log_pattern_naming_nothing_exits_2 --exit 2
               --stderr "--log 'nvswitch\\*': matches no component of this platform. the components are switch_0 .. switch_3, .*gpu_0 .. gpu_7"
               --absent ${NVSVP_CLI_OUT}/log_naming_nothing/report.json
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml --log "nvswitch*=debug"
                  --out ${NVSVP_CLI_OUT}/log_naming_nothing)
nvsvp_cli_test(trace_pattern_naming_nothing_exits_2 --exit 2
               --stderr "--trace 'gpu_8': matches no component"
               --absent ${NVSVP_CLI_OUT}/trace_naming_nothing/report.json
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml --trace gpu_8
                  --out ${NVSVP_CLI_OUT}/trace_naming_nothing)
nvsvp_cli_test(log_bad_level_exits_2 --exit 2
               --stderr "--log switch\\*=verbose: unknown level 'verbose'. expected PATTERN=LEVEL with LEVEL one of error, warn, info, debug, trace"
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml --log "switch*=verbose"
                  --out ${NVSVP_CLI_OUT}/log_bad_level)
# determinism.sh compares every CSV of two runs, the trace files included.
add_test(NAME cli.traces_are_deterministic
         COMMAND bash ${NVSVP_CLI_DIR}/determinism.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA}/small_uniform.yaml
                 ${NVSVP_CLI_OUT}/determinism_traces --trace "gpu_[03]" --trace switch_1 --trace firmware)
set_tests_properties(cli.traces_are_deterministic PROPERTIES TIMEOUT 120 ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)
# calibrate takes --log too: the NVLS all-reduce's multimem requests in switch 0's debug lines.
nvsvp_cli_test(calibrate_logs_the_named_switch --stdout "^nvls "
               --stderr "^[0-9]+\\.[0-9]{3} ns \\[debug\\] switch_0: multimem_(red|ld_reduce|store) #[0-9]+ from GPU [0-9]+: group at 0x"
               -- $<TARGET_FILE:nvsvp> calibrate ${NVSVP_CLI_DATA}/small_uniform.yaml --bytes 1048576 --log "switch_0=debug")
nvsvp_cli_test(calibrate_log_naming_nothing_exits_2 --exit 2 --stderr "--log 'gpu_99': matches no component"
               -- $<TARGET_FILE:nvsvp> calibrate ${NVSVP_CLI_DATA}/small_uniform.yaml --log "gpu_99=debug")
# Tutel's search runs each pipelining degree in a process of its own: each writes its own trace.
nvsvp_cli_test(trace_of_tutels_search_has_a_file_per_degree
               --fresh ${NVSVP_CLI_OUT}/trace_tutel_search
               --file ${NVSVP_CLI_OUT}/trace_tutel_search/transactions_tutel_degree1.csv "^[0-9]+\\.[0-9]{3},gpu_to_switch_[0-9]+,gpu_to_switch,0,"
               --file ${NVSVP_CLI_OUT}/trace_tutel_search/transactions_tutel_degree8.csv "^[0-9]+\\.[0-9]{3},switch_to_gpu_[0-9]+,switch_to_gpu,0,"
               --absent ${NVSVP_CLI_OUT}/trace_tutel_search/transactions_tutel.csv
               -- $<TARGET_FILE:nvsvp> run ${NVSVP_CLI_DATA}/small_uniform.yaml --set "schemes=[tutel]"
                  --set software.tutel_degree=0 --trace gpu_0 --quiet --out ${NVSVP_CLI_OUT}/trace_tutel_search)

# Inputs that are FIFOs or devices, and output folders that cannot be made or written (--out
# through a file, in /proc, /dev/null, a symlink loop, '', a read-only folder): exit 2, naming
# the path; nothing blocks.
add_test(NAME cli.special_files_and_unusable_output_folders_are_refused
         COMMAND bash ${NVSVP_CLI_DIR}/special_files.sh $<TARGET_FILE:nvsvp> ${NVSVP_CLI_DATA} ${NVSVP_CLI_OUT}/special_files)
set_tests_properties(cli.special_files_and_unusable_output_folders_are_refused PROPERTIES TIMEOUT 300
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)

# anchors --quiet with a case its plan refuses: exit 2, the reason on stderr.
add_test(NAME cli.anchors_quiet_names_a_refused_case
         COMMAND bash ${NVSVP_CLI_DIR}/anchors_quiet.sh $<TARGET_FILE:nvsvp> ${PROJECT_SOURCE_DIR}/configs
                 ${NVSVP_CLI_OUT}/anchors_quiet)
set_tests_properties(cli.anchors_quiet_names_a_refused_case PROPERTIES TIMEOUT 120
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)
