/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

// A Vala program that uses libmeshsync as a third party would: through its VAPI and
// pkg-config only. The optional arguments (cancellables, the context) are left out.

async void discover (MeshSync.KubeConfig config) throws GLib.Error {
	var discovery = new MeshSync.Discovery (config);
	yield discovery.run_async ();
}

int main (string[] args) {
	const string KUBECONFIG = """apiVersion: v1
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
""";
	try {
		var config = new MeshSync.KubeConfig.from_data (KUBECONFIG.data);
		var service = new MeshSync.Service (config);
		service.set_output_namespaces ({ "a", "b" });
		if (args.length > 1)
			discover.begin (config);
		print ("%s %s\n", MeshSync.get_version (), config.get_server ());
	} catch (GLib.Error e) {
		printerr ("%s\n", e.message);
		return 1;
	}
	return 0;
}
