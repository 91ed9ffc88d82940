#!/bin/sh
# Waits for the cluster's frontend, then creates the namespace (retention 24 h) unless it
# exists, and registers the session search attributes in it (src/common/search-attributes.ts).
# docker-compose.yml runs it in the temporalio/admin-tools image (service temporal-namespace);
# scripts/cluster.ts does the same (the namespace through @temporalio/client, the attributes
# with the same temporal commands).
#
# Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE (default `default`), TEMPORAL_TLS (`mtls`:
# connect with the certificates in TEMPORAL_TLS_DIR, verifying TEMPORAL_TLS_SERVER_NAME).
set -eu

namespace=${TEMPORAL_NAMESPACE:-default}
if [ "${TEMPORAL_TLS:-off}" = mtls ]; then
  set -- --tls-ca-path "$TEMPORAL_TLS_DIR/ca.pem" --tls-cert-path "$TEMPORAL_TLS_DIR/client.pem" \
    --tls-key-path "$TEMPORAL_TLS_DIR/client.key" --tls-server-name "${TEMPORAL_TLS_SERVER_NAME:?}"
fi
tries=0
until temporal operator cluster health "$@" >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "the frontend at ${TEMPORAL_ADDRESS:?} did not answer within 60 s" >&2
    exit 1
  fi
  sleep 1
done
if temporal operator namespace describe --namespace "$namespace" "$@" >/dev/null 2>&1; then
  echo "namespace $namespace exists"
else
  temporal operator namespace create --namespace "$namespace" --retention 24h "$@"
fi
# One command an attribute (the CLI registers only the first --name of a command); one that
# exists with the same type is registered again without error, so a rerun is harmless.
for attribute in DurableAgentName:Keyword DurableAgentVersion:Keyword DurableAgentStatus:Keyword \
  DurableAgentPendingApprovals:Int DurableAgentLastDecision:Keyword \
  DurableAgentSpentTokens:Int DurableAgentSpendUsd:Double; do
  temporal operator search-attribute create --namespace "$namespace" \
    --name "${attribute%%:*}" --type "${attribute#*:}" "$@"
done
