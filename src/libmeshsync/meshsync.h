/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#define __MESHSYNC_H_INSIDE__

#include <libmeshsync/meshsync-version.h>
#include <libmeshsync/meshsync-enum-types.h>
#include <libmeshsync/meshsync-error.h>
#include <libmeshsync/meshsync-event-type.h>
#include <libmeshsync/meshsync-kube-config.h>
#include <libmeshsync/meshsync-api-resource.h>
#include <libmeshsync/meshsync-resource.h>
#include <libmeshsync/meshsync-discovery.h>
#include <libmeshsync/meshsync-watch-config.h>
#include <libmeshsync/meshsync-writer.h>
#include <libmeshsync/meshsync-bus.h>
#include <libmeshsync/meshsync-file-writer.h>
#include <libmeshsync/meshsync-composite-writer.h>
#include <libmeshsync/meshsync-stage.h>
#include <libmeshsync/meshsync-pipeline.h>
#include <libmeshsync/meshsync-handler.h>
#include <libmeshsync/meshsync-handler-store.h>
#include <libmeshsync/meshsync-broker.h>
#include <libmeshsync/meshsync-broker-writer.h>
#include <libmeshsync/meshsync-health-server.h>
#include <libmeshsync/meshsync-session.h>
#include <libmeshsync/meshsync-service.h>

#undef __MESHSYNC_H_INSIDE__
