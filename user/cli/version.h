/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The tool's version (`keyrouter version`, the Prometheus keyrouter_info label). */
#ifndef KR_CLI_VERSION_H
#define KR_CLI_VERSION_H

#ifndef KR_VERSION
#define KR_VERSION "0.1.0"
#endif

#endif
