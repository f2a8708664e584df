/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 *
 * Runs a MeshSync.Handler against the cluster of a kubeconfig with a writer written in Vala
 * that counts ADDED events. Once the handler is ready it prints one "uid UID KIND NAMESPACE
 * NAME" line per object added so far (for the driver to compare with the cluster), then
 * "added N", and exits 0; it exits 1 when the handler fails, a write is not ADDED, or the initial sync
 * does not complete within a minute.
 */

class CountingWriter : Object, MeshSync.Writer {
	public uint added = 0;
	public uint other = 0;
	public GenericArray<string> lines = new GenericArray<string> ();

	public bool write (MeshSync.Resource resource, MeshSync.EventType event_type) throws Error {
		if (event_type != MeshSync.EventType.ADDED) {
			other++;
			return true;
		}
		added++;
		lines.add ("uid\t%s\t%s\t%s\t%s".printf (resource.get_uid (), resource.get_kind (),
		                                        resource.get_namespace () ?? "",
		                                        resource.get_name ()));
		return true;
	}

	public bool flush () throws Error {
		return true;
	}

	public bool close () throws Error {
		return true;
	}

	public bool is_writable () {
		return true;
	}
}

int main (string[] args) {
	if (args.length != 2) {
		stderr.printf ("usage: %s KUBECONFIG\n", args[0]);
		return 2;
	}

	var loop = new MainLoop ();
	var writer = new CountingWriter ();
	MeshSync.Handler handler;
	int status = 1;
	uint added_at_ready = 0;

	try {
		var config = new MeshSync.KubeConfig.from_file (args[1], null);
		handler = new MeshSync.Handler (config, writer);
	} catch (Error e) {
		stderr.printf ("cannot set up: %s\n", e.message);
		return 1;
	}

	handler.ready_changed.connect ((ready) => {
		if (ready) {
			/* what the writer had when the handler said it was ready, not what stop()
			 * may still hand over */
			added_at_ready = writer.added;
			status = 0;
			loop.quit ();
		}
	});
	handler.failed.connect ((error) => {
		stderr.printf ("handler failed: %s\n", error.message);
		loop.quit ();
	});
	Timeout.add_seconds (60, () => {
		stderr.printf ("the initial sync did not complete\n");
		loop.quit ();
		return Source.REMOVE;
	});

	try {
		handler.start ();
	} catch (Error e) {
		stderr.printf ("cannot start: %s\n", e.message);
		return 1;
	}
	loop.run ();
	handler.stop ();

	if (status != 0)
		return status;
	if (writer.other != 0) {
		stderr.printf ("%u events before ready were not ADDED\n", writer.other);
		return 1;
	}
	for (uint i = 0; i < added_at_ready; i++)
		stdout.printf ("%s\n", writer.lines[i]);
	stdout.printf ("added %u\n", added_at_ready);
	return 0;
}
