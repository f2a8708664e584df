/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 *
 * Discovers the resource types of the cluster of a kubeconfig and prints them, one per line:
 * group-version, plural, kind, scope, watchable, subresources. Exits 1 when the run fails or
 * pods, namespaces or deployments are missing or not watchable.
 */

async bool discover (string kubeconfig) {
	MeshSync.Discovery discovery;

	try {
		var config = new MeshSync.KubeConfig.from_file (kubeconfig, null);
		discovery = new MeshSync.Discovery (config);
		yield discovery.run_async (null);
	} catch (GLib.Error e) {
		stderr.printf ("discovery failed: %s\n", e.message);
		return false;
	}

	stdout.printf ("server %s\n", discovery.get_server_version ());
	var resources = discovery.get_resources ();
	for (uint i = 0; i < resources.length; i++) {
		var r = resources[i];
		stdout.printf ("%s\t%s\t%s\t%s\t%s\t%s\n",
			       r.get_group_version (),
			       r.get_plural (),
			       r.get_kind (),
			       r.get_namespaced () ? "namespaced" : "cluster",
			       r.get_watchable () ? "watchable" : "-",
			       string.joinv (",", r.get_subresources ()));
	}

	string[,] wanted = { { "", "pods" }, { "", "namespaces" }, { "apps", "deployments" } };
	bool ok = true;
	for (int i = 0; i < wanted.length[0]; i++) {
		var r = discovery.lookup (wanted[i, 0], null, wanted[i, 1]);
		if (r == null || !r.get_watchable ()) {
			stderr.printf ("%s/%s is missing or not watchable\n", wanted[i, 0], wanted[i, 1]);
			ok = false;
		}
	}
	return ok;
}

int main (string[] args) {
	if (args.length != 2) {
		stderr.printf ("usage: %s KUBECONFIG\n", args[0]);
		return 2;
	}

	var loop = new MainLoop ();
	bool ok = false;
	discover.begin (args[1], (obj, res) => {
		ok = discover.end (res);
		loop.quit ();
	});
	loop.run ();
	return ok ? 0 : 1;
}
