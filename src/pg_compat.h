/*
 * pg_compat.h
 *		The PostgreSQL APIs that moved between the major versions mtdpp
 *		builds on, one definition per API, each named by the version that
 *		moved it.
 *
 * PostgreSQL 15, 17 and 18 are built and tested (scripts/test); the guards
 * for 16 follow its release notes and source changes, and are built by
 * reasoning only (doc/install.md).
 */
#ifndef MTDPP_PG_COMPAT_H
#define MTDPP_PG_COMPAT_H

#if PG_VERSION_NUM < 150000
#error "mtdpp needs PostgreSQL 15 or later"
#endif

#include "catalog/pg_namespace.h"
#include "utils/acl.h"

#include "storage/proc.h"

/* PostgreSQL 16 moved the varlena macros out of postgres.h, into varatt.h */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* PostgreSQL 17 moved a backend's local transaction id into PGPROC.vxid */
#if PG_VERSION_NUM >= 170000
#define MTDPP_MY_LXID	(MyProc->vxid.lxid)
#else
#define MTDPP_MY_LXID	(MyProc->lxid)
#endif

/*
 * PostgreSQL 16 replaced the per-catalog ACL checks of most objects
 * (pg_namespace_aclcheck among them) by object_aclcheck
 */
#if PG_VERSION_NUM >= 160000
#define mtdpp_namespace_aclcheck(nsp, role, mode) \
	object_aclcheck(NamespaceRelationId, (nsp), (role), (mode))
#else
#define mtdpp_namespace_aclcheck(nsp, role, mode) \
	pg_namespace_aclcheck((nsp), (role), (mode))
#endif
#if PG_VERSION_NUM >= 160000
#define mtdpp_database_aclcheck(db, role, mode) \
	object_aclcheck(DatabaseRelationId, (db), (role), (mode))
#else
#define mtdpp_database_aclcheck(db, role, mode) \
	pg_database_aclcheck((db), (role), (mode))
#endif

/*
 * This backend's slot among MaxBackends, from 0, or -1 for none.
 * PostgreSQL 17 replaced the backend id (MyBackendId, from 1,
 * storage/backendid.h) by the proc number (MyProcNumber, from 0,
 * storage/procnumber.h); both number the regular backends first.
 */
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#define MTDPP_MY_BACKEND_SLOT \
	(MyProcNumber == INVALID_PROC_NUMBER ? -1 : (int) MyProcNumber)
#else
#include "storage/backendid.h"
#define MTDPP_MY_BACKEND_SLOT \
	(MyBackendId == InvalidBackendId ? -1 : (int) MyBackendId - 1)
#endif

/*
 * PostgreSQL 18 lets a module's magic block carry its name and version,
 * which pg_get_loaded_modules() shows
 */
#if PG_VERSION_NUM >= 180000
#define MTDPP_MODULE_MAGIC \
	PG_MODULE_MAGIC_EXT(.name = "mtdpp", .version = MTDPP_VERSION)
#else
#define MTDPP_MODULE_MAGIC PG_MODULE_MAGIC
#endif

#endif							/* MTDPP_PG_COMPAT_H */
