/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include <libmeshsync/meshsync.h>

#include "msd-dbus-generated.h"
#include "util/msd-localedir.h"

#define MESHSYNCCTL_BUS_NAME    "io.meshery.MeshSync1"
#define MESHSYNCCTL_OBJECT_PATH "/io/meshery/MeshSync1"

/* Usage errors exit 2, like the daemon; everything else that fails exits 1. */
#define MESHSYNCCTL_EXIT_USAGE 2

typedef struct {
	const gchar *group;
	const gchar *version;
	const gchar *kind;
	const gchar *plural;
	gboolean namespaced;
	gboolean watchable;
} MeshSyncCtlRow;

static const gchar *
meshsyncctl_bus_text(GBusType bus_type)
{
	return bus_type == G_BUS_TYPE_SYSTEM ? "system" : "session";
}

/* Remote errors arrive as "GDBus.Error:io.meshery...: text"; the name is noise to a user, and
 * the code is still in the GError thanks to the registered domain. */
static gint
meshsyncctl_fail(GError *error)
{
	if (g_dbus_error_is_remote_error(error))
		g_dbus_error_strip_remote_error(error);
	g_printerr("meshsyncctl: %s\n", error->message);
	return EXIT_FAILURE;
}

static MsdDBusManager *
meshsyncctl_connect(GBusType bus_type, GError **error)
{
	g_autoptr(GDBusConnection) connection = NULL;
	g_autoptr(MsdDBusManager) manager = NULL;
	g_autofree gchar *owner = NULL;

	connection = g_bus_get_sync(bus_type, NULL, error);
	if (connection == NULL) {
		g_prefix_error(error, _("cannot connect to the %s bus: "),
		               meshsyncctl_bus_text(bus_type));
		return NULL;
	}
	/* No auto-start: the daemon is a service of its own, not bus-activated; asking the bus
	 * to start it would only turn "not running" into a less clear error. */
	manager = msd_dbus_manager_proxy_new_sync(connection, G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START,
	                                          MESHSYNCCTL_BUS_NAME, MESHSYNCCTL_OBJECT_PATH,
	                                          NULL, error);
	if (manager == NULL)
		return NULL;
	owner = g_dbus_proxy_get_name_owner(G_DBUS_PROXY(manager));
	if (owner == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            _("the meshsync daemon is not running on the %s bus (nothing owns %s); "
		              "start it with --dbus=%s"),
		            meshsyncctl_bus_text(bus_type), MESHSYNCCTL_BUS_NAME,
		            meshsyncctl_bus_text(bus_type));
		return NULL;
	}
	return g_steal_pointer(&manager);
}

static const gchar *
meshsyncctl_or_none(const gchar *value)
{
	return value != NULL && *value != '\0' ? value : _("(unknown)");
}

static gint
meshsyncctl_status(MsdDBusManager *manager)
{
	g_print("%-16s %s\n", _("Version:"),
	        meshsyncctl_or_none(msd_dbus_manager_get_version(manager)));
	g_print("%-16s %s\n", _("Server:"),
	        meshsyncctl_or_none(msd_dbus_manager_get_server(manager)));
	g_print("%-16s %s\n", _("Server version:"),
	        meshsyncctl_or_none(msd_dbus_manager_get_server_version(manager)));
	g_print("%-16s %s\n", _("Ready:"),
	        msd_dbus_manager_get_ready(manager) ? _("yes") : _("no"));
	g_print("%-16s %s\n", _("Cluster id:"),
	        meshsyncctl_or_none(msd_dbus_manager_get_cluster_id(manager)));
	g_print("%-16s %u\n", _("Objects:"), msd_dbus_manager_get_objects(manager));
	g_print("%-16s %" G_GSIZE_FORMAT "\n", _("Sessions:"),
	        msd_dbus_manager_get_sessions(manager) != NULL
	                ? g_variant_n_children(msd_dbus_manager_get_sessions(manager))
	                : 0);
	return EXIT_SUCCESS;
}

/* One line per open log or exec session: kind, namespace, pod, container, then the id. */
static gint
meshsyncctl_sessions(MsdDBusManager *manager)
{
	GVariant *sessions = msd_dbus_manager_get_sessions(manager);
	GVariantIter iter;
	const gchar *id, *kind, *ns, *pod, *container;

	g_print("%-5s %-20s %-32s %-20s %s\n", _("KIND"), _("NAMESPACE"), _("POD"), _("CONTAINER"),
	        _("SESSION"));
	if (sessions == NULL)
		return EXIT_SUCCESS;
	g_variant_iter_init(&iter, sessions);
	while (g_variant_iter_next(&iter, "(&s&s&s&s&s)", &id, &kind, &ns, &pod, &container))
		g_print("%-5s %-20s %-32s %-20s %s\n", kind, ns, pod, container, id);
	return EXIT_SUCCESS;
}

/* The same order as `meshsync --list-resources`: by group, then plural. */
static gint
meshsyncctl_row_compare(gconstpointer a, gconstpointer b)
{
	const MeshSyncCtlRow *left = a;
	const MeshSyncCtlRow *right = b;
	gint by_group = g_strcmp0(left->group, right->group);

	return by_group != 0 ? by_group : g_strcmp0(left->plural, right->plural);
}

static gint
meshsyncctl_resources(MsdDBusManager *manager)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GVariant) resources = NULL;
	g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(MeshSyncCtlRow));
	g_autoptr(GPtrArray) api_versions = g_ptr_array_new_with_free_func(g_free);
	const gchar *titles[] = {"NAME", "APIVERSION", "NAMESPACED", "KIND", "WATCHABLE"};
	gsize widths[G_N_ELEMENTS(titles)];
	GVariantIter iter;
	MeshSyncCtlRow row;

	if (!msd_dbus_manager_call_list_resources_sync(manager, G_DBUS_CALL_FLAGS_NONE, -1,
	                                               &resources, NULL, &error))
		return meshsyncctl_fail(error);

	g_variant_iter_init(&iter, resources);
	while (g_variant_iter_next(&iter, "(&s&s&s&sbb)", &row.group, &row.version, &row.kind,
	                           &row.plural, &row.namespaced, &row.watchable))
		g_array_append_val(rows, row);
	g_array_sort(rows, meshsyncctl_row_compare);

	for (guint c = 0; c < G_N_ELEMENTS(titles); c++)
		widths[c] = strlen(titles[c]);
	for (guint i = 0; i < rows->len; i++) {
		MeshSyncCtlRow *r = &g_array_index(rows, MeshSyncCtlRow, i);
		gchar *api_version = *r->group != '\0'
		                             ? g_strdup_printf("%s/%s", r->group, r->version)
		                             : g_strdup(r->version);

		g_ptr_array_add(api_versions, api_version);
		widths[0] = MAX(widths[0], strlen(r->plural));
		widths[1] = MAX(widths[1], strlen(api_version));
		widths[3] = MAX(widths[3], strlen(r->kind));
	}

	g_print("%-*s   %-*s   %-*s   %-*s   %s\n", (gint)widths[0], titles[0], (gint)widths[1],
	        titles[1], (gint)widths[2], titles[2], (gint)widths[3], titles[3], titles[4]);
	for (guint i = 0; i < rows->len; i++) {
		MeshSyncCtlRow *r = &g_array_index(rows, MeshSyncCtlRow, i);

		g_print("%-*s   %-*s   %-*s   %-*s   %s\n", (gint)widths[0], r->plural,
		        (gint)widths[1], (const gchar *)g_ptr_array_index(api_versions, i),
		        (gint)widths[2], r->namespaced ? "true" : "false", (gint)widths[3], r->kind,
		        r->watchable ? "true" : "false");
	}
	return EXIT_SUCCESS;
}

static gint
meshsyncctl_resync(MsdDBusManager *manager)
{
	g_autoptr(GError) error = NULL;

	if (!msd_dbus_manager_call_resync_sync(manager, G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error))
		return meshsyncctl_fail(error);
	g_print(_("Resync requested: the daemon lists everything again.\n"));
	return EXIT_SUCCESS;
}

int
main(int argc, char **argv)
{
	g_autoptr(GOptionContext) context = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(MsdDBusManager) manager = NULL;
	gboolean system_bus = FALSE;
	gboolean version = FALSE;
	GBusType bus_type;
	const gchar *command;
	const GOptionEntry entries[] = {
	        {"system", 0, 0, G_OPTION_ARG_NONE, &system_bus,
	         N_("Talk to the daemon on the system bus (default: the session bus)"), NULL},
	        {"version", 0, 0, G_OPTION_ARG_NONE, &version, N_("Print the version and exit"),
	         NULL},
	        {NULL},
	};

	setlocale(LC_ALL, "");
	bindtextdomain(GETTEXT_PACKAGE, msd_localedir());
	bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
	textdomain(GETTEXT_PACKAGE);

	context = g_option_context_new(_("COMMAND"));
	g_option_context_set_summary(
	        context, _("Queries and controls a running meshsync daemon over D-Bus.\n\n"
	                   "Commands:\n"
	                   "  status      Version, API server, readiness, cluster id, objects and "
	                   "sessions\n"
	                   "  sessions    The log and exec sessions open now\n"
	                   "  resources   The API server's resource types, as a table\n"
	                   "  resync      Ask the daemon to discover and list everything again\n\n"
	                   "The daemon must run with --dbus=session (or --dbus=system, then use "
	                   "--system)."));
	g_option_context_add_main_entries(context, entries, GETTEXT_PACKAGE);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		g_printerr("meshsyncctl: %s\n", error->message);
		g_printerr(_("Run 'meshsyncctl --help' to see the commands.\n"));
		return MESHSYNCCTL_EXIT_USAGE;
	}
	if (version) {
		g_print("meshsyncctl %s\n", meshsync_get_version());
		return EXIT_SUCCESS;
	}
	command = argc == 2 ? argv[1] : NULL;
	if (g_strcmp0(command, "status") != 0 && g_strcmp0(command, "resources") != 0 &&
	    g_strcmp0(command, "resync") != 0 && g_strcmp0(command, "sessions") != 0) {
		if (argc < 2)
			g_printerr(_("meshsyncctl: no command given\n"));
		else if (argc > 2)
			g_printerr(_("meshsyncctl: one command at a time\n"));
		else
			g_printerr(_("meshsyncctl: unknown command \"%s\"\n"), command);
		g_printerr(_("Run 'meshsyncctl --help' to see the commands.\n"));
		return MESHSYNCCTL_EXIT_USAGE;
	}

	/* Registers the error domain before the first call, so remote errors map back. */
	(void)MESHSYNC_ERROR;
	bus_type = system_bus ? G_BUS_TYPE_SYSTEM : G_BUS_TYPE_SESSION;
	manager = meshsyncctl_connect(bus_type, &error);
	if (manager == NULL)
		return meshsyncctl_fail(error);
	if (g_str_equal(command, "status"))
		return meshsyncctl_status(manager);
	if (g_str_equal(command, "resources"))
		return meshsyncctl_resources(manager);
	if (g_str_equal(command, "sessions"))
		return meshsyncctl_sessions(manager);
	return meshsyncctl_resync(manager);
}
