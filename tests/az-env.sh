# tests/az-env.sh: sourced by the shell tests that need Azure Blob
# (build-aux/test-all starts Azurite with tests/azurite.sh and exports its
# SPOTRUN_TEST_AZ_ENDPOINT, _ACCOUNT and _KEY).
#
# Without Azurite the test is skipped (whole-file TAP skip), unless
# SPOTRUN_TEST_REQUIRE_AZ=1 (test-all sets it): then it fails, so that an
# Azurite that did not start cannot pass for a green run.
#
# It offers:
#   az_cli ARGS...          the Azure CLI (Debian's azure-cli) against
#                           Azurite: its connection string in its
#                           environment, never on a command line; its own
#                           files in $az_cli_dir (set it before the first
#                           call; t_setup's $t_tmp/az-cli by default)
#   az_container_new        create a container with a unique name, print it
#   az_container_rm NAME    remove it with its blobs

az_unavailable()
{
	if [ "${SPOTRUN_TEST_REQUIRE_AZ:-}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - $1, and SPOTRUN_TEST_REQUIRE_AZ=1: build-aux/test-all could not start Azurite (see its output)"
		exit 1
	fi
	echo "1..0 # SKIP $1"
	exit 0
}

if [ -z "${SPOTRUN_TEST_AZ_ENDPOINT:-}" ]; then
	az_unavailable "no Azurite (SPOTRUN_TEST_AZ_ENDPOINT unset; build-aux/test-all starts it)"
fi
command -v az >/dev/null 2>&1 ||
    az_unavailable "no Azure CLI on PATH (build-aux/install-deps installs azure-cli)"

az_cli()
{
	(
		AZURE_CONFIG_DIR=${az_cli_dir:-$t_tmp/az-cli}
		AZURE_CORE_COLLECT_TELEMETRY=no
		AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=$SPOTRUN_TEST_AZ_ACCOUNT;AccountKey=$SPOTRUN_TEST_AZ_KEY;BlobEndpoint=$SPOTRUN_TEST_AZ_ENDPOINT;"
		export AZURE_CONFIG_DIR AZURE_CORE_COLLECT_TELEMETRY AZURE_STORAGE_CONNECTION_STRING
		unset AZURE_STORAGE_KEY AZURE_STORAGE_ACCOUNT AZURE_STORAGE_SAS_TOKEN
		az "$@"
	)
}

az_container_new()
{
	# 3 to 63 of lower case, digits and single '-'
	_az_name=$(basename "$0" .sh | tr 'A-Z_.' 'a-z--' | tr -dc 'a-z0-9-' | cut -c1-20)
	_az_name=$_az_name-$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
	az_cli storage container create -n "$_az_name" -o none || return 1
	echo "$_az_name"
}

az_container_rm()
{
	[ -n "$1" ] || return 0
	az_cli storage container delete -n "$1" -o none >/dev/null 2>&1
}
