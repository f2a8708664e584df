#!/bin/sh
# Test credential plugin. "token NAME" prints a token "$PLUGIN_PREFIX-NAME-RUN" (RUN counts the
# runs); "cert" prints the client certificate and key of this directory. The environment set by
# the test decides the rest: MESHSYNC_TEST_EXEC_COUNT (file that counts runs),
# MESHSYNC_TEST_EXEC_INFO (file that receives KUBERNETES_EXEC_INFO), MESHSYNC_TEST_EXEC_EXPIRY
# (expirationTimestamp), MESHSYNC_TEST_EXEC_FAIL (exit 3 with this on stderr),
# MESHSYNC_TEST_EXEC_HANG (never answer, like a plugin stuck on a prompt or a network).
set -eu
here=$(dirname "$0")
run=0
if [ -n "${MESHSYNC_TEST_EXEC_COUNT:-}" ]; then
	echo run >>"$MESHSYNC_TEST_EXEC_COUNT"
	run=$(wc -l <"$MESHSYNC_TEST_EXEC_COUNT" | tr -d ' ')
fi
if [ -n "${MESHSYNC_TEST_EXEC_INFO:-}" ]; then
	printf '%s' "${KUBERNETES_EXEC_INFO:-}" >"$MESHSYNC_TEST_EXEC_INFO"
fi
if [ -n "${MESHSYNC_TEST_EXEC_HANG:-}" ]; then
	exec sleep 3600
fi
if [ -n "${MESHSYNC_TEST_EXEC_FAIL:-}" ]; then
	echo "$MESHSYNC_TEST_EXEC_FAIL" >&2
	exit 3
fi
api=$(printf '%s' "${KUBERNETES_EXEC_INFO:-}" | sed -n 's/.*"apiVersion" *: *"\([^"]*\)".*/\1/p')
expiry=""
if [ -n "${MESHSYNC_TEST_EXEC_EXPIRY:-}" ]; then
	expiry=",\"expirationTimestamp\":\"$MESHSYNC_TEST_EXEC_EXPIRY\""
fi
case "$1" in
token)
	printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"%s-%s-%s"%s}}\n' \
		"$api" "${PLUGIN_PREFIX:-none}" "$2" "$run" "$expiry"
	;;
cert)
	cert=$(awk '{ printf "%s\\n", $0 }' "$here/client.crt")
	key=$(awk '{ printf "%s\\n", $0 }' "$here/client.key")
	printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"clientCertificateData":"%s","clientKeyData":"%s"%s}}\n' \
		"$api" "$cert" "$key" "$expiry"
	;;
*)
	echo "usage: $0 token NAME | cert" >&2
	exit 2
	;;
esac
