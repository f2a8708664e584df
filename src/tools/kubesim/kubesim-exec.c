/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-server.h"

void
kubesim_exec_handle(KubesimServer *self,
                    SoupServerMessage *msg,
                    KubesimRequest *req,
                    GHashTable *query)
{
	kubesim_respond_status(msg, kubesim_status_new(501, "NotImplemented",
	                                               "pods/exec is not implemented yet by "
	                                               "kubesim"));
}

void
kubesim_exec_close_all(KubesimServer *self)
{
}
