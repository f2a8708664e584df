/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "meshsync-stage.h"
#include "meshsync-watch-config.h"

G_BEGIN_DECLS

/* Registers the informers of one stage of the watch configuration ("global", "local"). */
#define MSD_TYPE_REGISTER_STAGE (msd_register_stage_get_type())
G_DECLARE_FINAL_TYPE(MsdRegisterStage, msd_register_stage, MSD, REGISTER_STAGE, MeshSyncStage)

MeshSyncStage *msd_register_stage_new(MeshSyncWatchStage watch_stage);

/* Starts every registered informer and waits until each has its initial state. */
#define MSD_TYPE_START_INFORMERS_STAGE (msd_start_informers_stage_get_type())
G_DECLARE_FINAL_TYPE(MsdStartInformersStage,
                     msd_start_informers_stage,
                     MSD,
                     START_INFORMERS_STAGE,
                     MeshSyncStage)

MeshSyncStage *msd_start_informers_stage_new(void);

G_END_DECLS
