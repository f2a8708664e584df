# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""The introspected API takes what a Python caller naturally has: lists of strings rather
than comma-joined strings, bytes without a separate length, optional arguments left out."""

import pytest

KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
"""


@pytest.fixture(name="MeshSync")
def _meshsync():
    import gi

    gi.require_version("MeshSync", "1.0")
    from gi.repository import MeshSync

    return MeshSync


def test_kube_config_from_bytes_without_a_length(MeshSync):
    config = MeshSync.KubeConfig.new_from_data(KUBECONFIG.encode(), None)
    assert config.get_server() == "https://127.0.0.1:6443"


def test_filters_take_lists(MeshSync):
    watch = MeshSync.WatchConfig.new_default()
    watch.set_output_namespaces(["shop", "team-1"])
    assert watch.accepts_namespace("shop") and watch.accepts_namespace("team-1")
    assert not watch.accepts_namespace("kube-system")
    watch.set_output_resources(["Pod"])
    assert watch.accepts_resource("pods.v1.")
    assert not watch.accepts_resource("services.v1.")
    watch.set_output_namespaces(None)
    assert watch.accepts_namespace("kube-system")

    config = MeshSync.KubeConfig.new_from_data(KUBECONFIG.encode(), None)
    handler = MeshSync.Handler.new(config, None)
    handler.set_output_namespaces(["shop"])
    handler.set_output_resources(["pod", "deployment"])
    handler.set_namespaces(["shop"])
    service = MeshSync.Service.new(config)
    service.set_namespaces(["shop", "team-1"])


def test_upstream_list_splitting(MeshSync):
    assert MeshSync.WatchConfig.split_list(" a, b,") == ["a", " b", ""]
    assert not MeshSync.WatchConfig.split_list("   ")  # NULL, which Python sees as []


def test_broker_closes_asynchronously(MeshSync):
    from gi.repository import GLib

    broker = MeshSync.Broker.new("nats://127.0.0.1:1")
    loop = GLib.MainLoop()
    results = []

    def closed(source, result):
        results.append(source.close_finish(result))
        loop.quit()

    broker.close_async(None, closed)
    loop.run()
    assert results == [True]
    assert broker.get_state() == MeshSync.BrokerState.CLOSED
