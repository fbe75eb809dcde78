# no-cloud.sh: sourced by the shell tests that run spotrun (through lib.sh,
# cloud.sh, or directly). Points all three metadata endpoints at a closed
# loopback port, so that `[provider] name = auto` (the default) probes
# nothing but loopback and settles on local at once: no test ever reaches
# 169.254.169.254, metadata.google.internal or fd00:ec2::254. A test that
# emulates a cloud overrides that cloud's variable afterwards.
SPOTRUN_AWS_ENDPOINT=http://127.0.0.1:1
SPOTRUN_GCP_ENDPOINT=http://127.0.0.1:1
SPOTRUN_AZURE_ENDPOINT=http://127.0.0.1:1
export SPOTRUN_AWS_ENDPOINT SPOTRUN_GCP_ENDPOINT SPOTRUN_AZURE_ENDPOINT
