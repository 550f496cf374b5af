/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The part of IGT's core API (lib/igt_core.h) our tests use.
 *
 * Debian's intel-gpu-tools ships libigt.so but no headers, so this file
 * declares what we call, with the same names, signatures and macro
 * semantics as upstream IGT. Inside an upstream IGT tree the real IGT header
 * is found first and this one is not used: test sources build unchanged
 * there (tests/amdgpu/).
 */
#ifndef UALINK_IGT_H
#define UALINK_IGT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <inttypes.h>

#ifndef IGT_LOG_DOMAIN
#define IGT_LOG_DOMAIN (NULL)
#endif

#define igt_noreturn _Noreturn
#define igt_printf_fmt(f, a) __attribute__((__format__(__printf__, f, a)))

enum igt_log_level {
	IGT_LOG_DEBUG,
	IGT_LOG_INFO,
	IGT_LOG_WARN,
	IGT_LOG_CRITICAL,
	IGT_LOG_NONE,
};

#define IGT_EXIT_SKIP		77
#define IGT_EXIT_SUCCESS	0
#define IGT_EXIT_INVALID	79
#define IGT_EXIT_FAILURE	98
#define IGT_EXIT_ABORT		112

typedef int (*igt_opt_handler_t)(int opt, int opt_index, void *data);

extern jmp_buf igt_subtest_jmpbuf;

int igt_subtest_init_parse_opts(int *argc, char **argv,
				const char *extra_short_opts,
				const struct option *extra_long_opts,
				const char *help_str,
				igt_opt_handler_t extra_opt_handler,
				void *handler_data);
bool __igt_run_subtest(const char *subtest_name, const char *file,
		       const int line);
void igt_success(void);
igt_noreturn void igt_exit(void);
igt_noreturn void igt_fail(int exitcode);
igt_noreturn void igt_skip(const char *f, ...) igt_printf_fmt(1, 2);
bool __igt_fixture(void);
void __igt_fixture_complete(void);
void igt_describe_f(const char *fmt, ...) igt_printf_fmt(1, 2);
igt_noreturn void __igt_fail_assert(const char *domain, const char *file,
				    const int line, const char *func,
				    const char *assertion, const char *format,
				    ...) igt_printf_fmt(6, 7);
igt_noreturn void __igt_skip_check(const char *file, const int line,
				   const char *func, const char *check,
				   const char *format, ...) igt_printf_fmt(5, 6);
void igt_log(const char *domain, enum igt_log_level level,
	     const char *format, ...) igt_printf_fmt(3, 4);
void __igt_subtest_group_save(int *save, int *desc);
void __igt_subtest_group_restore(int save, int desc);
bool __igt_fork(void);
int __igt_waitchildren(void);
void igt_waitchildren(void);
void igt_waitchildren_timeout(int seconds, const char *reason);
void igt_set_timeout(unsigned int seconds, const char *op);
void igt_reset_timeout(void);
typedef void (*igt_exit_handler_t)(int sig);
void igt_install_exit_handler(igt_exit_handler_t fn);
bool igt_only_list_subtests(void);
const char *igt_subtest_name(void);

#define igt_unique_cat(a, b) a ## b
#define igt_unique_(a, b) igt_unique_cat(a, b)
#define igt_unique(prefix) igt_unique_(prefix, __LINE__)

#define igt_main \
	static void __igt_real_main(void); \
	int main(int argc, char **argv) \
	{ \
		igt_subtest_init_parse_opts(&argc, argv, NULL, NULL, NULL, \
					    NULL, NULL); \
		__igt_real_main(); \
		igt_exit(); \
	} \
	static void __igt_real_main(void)

#define igt_fixture \
	for (int igt_unique(__tmpint) = 0; \
	     igt_unique(__tmpint) < 1 && __igt_fixture() && \
	     sigsetjmp(igt_subtest_jmpbuf, 1) == 0; \
	     igt_unique(__tmpint)++, __igt_fixture_complete())

#define igt_subtest(name) \
	for (; __igt_run_subtest((name), __FILE__, __LINE__) && \
	       sigsetjmp(igt_subtest_jmpbuf, 1) == 0; \
	       igt_success())

#define __igt_subtest_f(tmp, format...) \
	for (char tmp [256]; \
	     snprintf(tmp, sizeof(tmp), format), \
	     __igt_run_subtest(tmp, __FILE__, __LINE__) && \
	     sigsetjmp(igt_subtest_jmpbuf, 1) == 0; \
	     igt_success())

#define igt_subtest_f(f...) __igt_subtest_f(igt_unique(__tmpchar), f)

#define igt_subtest_group \
	for (int igt_unique(__tmpint) = 0, \
		 igt_unique(__save) = 0, \
		 igt_unique(__desc) = 0; \
	     igt_unique(__tmpint) < 1 && \
	     (__igt_subtest_group_save(&igt_unique(__save), \
				       &igt_unique(__desc)), true); \
	     igt_unique(__tmpint)++, \
	     __igt_subtest_group_restore(igt_unique(__save), \
					 igt_unique(__desc)))

/*
 * igt_fork(child, n): runs the body in n children, child = 0..n-1; each
 * child exits 0 after the body. Collect them with igt_waitchildren(), which
 * fails the subtest when a child failed.
 */
#define igt_fork(child, num_children) \
	for (int child = 0; child < (num_children); child++) \
		for (; __igt_fork(); exit(0))

#define IGT_TEST_DESCRIPTION(str) const char *__igt_test_description = str

#define igt_describe(dsc) igt_describe_f("%s", dsc)

#define igt_debug(f...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_DEBUG, f)
#define igt_info(f...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_INFO, f)
#define igt_warn(f...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_WARN, f)
#define igt_critical(f...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_CRITICAL, f)

#define igt_assert(expr) \
	do { \
		if (!(expr)) \
			__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
					  __func__, #expr, NULL); \
	} while (0)

#define igt_assert_f(expr, f...) \
	do { \
		if (!(expr)) \
			__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
					  __func__, #expr, f); \
	} while (0)

#define igt_assert_cmpint(n1, cmp, ncmp, n2) \
	do { \
		int __n1 = (n1), __n2 = (n2); \
		if (!(__n1 cmp __n2)) \
			__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
					  __func__, #n1 " " #cmp " " #n2, \
					  "error: %d " #ncmp " %d\n", \
					  __n1, __n2); \
	} while (0)

#define igt_assert_cmpuint(n1, cmp, ncmp, n2) \
	do { \
		uint32_t __n1 = (n1), __n2 = (n2); \
		if (!(__n1 cmp __n2)) \
			__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
					  __func__, #n1 " " #cmp " " #n2, \
					  "error: %#x " #ncmp " %#x\n", \
					  __n1, __n2); \
	} while (0)

#define igt_assert_cmpu64(n1, cmp, ncmp, n2) \
	do { \
		uint64_t __n1 = (n1), __n2 = (n2); \
		if (!(__n1 cmp __n2)) \
			__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
					  __func__, #n1 " " #cmp " " #n2, \
					  "error: %#" PRIx64 " " #ncmp \
					  " %#" PRIx64 "\n", __n1, __n2); \
	} while (0)

#define igt_assert_eq(n1, n2) igt_assert_cmpint(n1, ==, !=, n2)
#define igt_assert_neq(n1, n2) igt_assert_cmpint(n1, !=, ==, n2)
#define igt_assert_eq_u32(n1, n2) igt_assert_cmpuint(n1, ==, !=, n2)
#define igt_assert_neq_u32(n1, n2) igt_assert_cmpuint(n1, !=, ==, n2)
#define igt_assert_eq_u64(n1, n2) igt_assert_cmpu64(n1, ==, !=, n2)
#define igt_assert_neq_u64(n1, n2) igt_assert_cmpu64(n1, !=, ==, n2)
#define igt_assert_lte(n1, n2) igt_assert_cmpint(n1, <=, >, n2)
#define igt_assert_lt(n1, n2) igt_assert_cmpint(n1, <, >=, n2)
#define igt_assert_lte_u64(n1, n2) igt_assert_cmpu64(n1, <=, >, n2)
#define igt_assert_lt_u64(n1, n2) igt_assert_cmpu64(n1, <, >=, n2)

#define igt_assert_fd(fd) \
	igt_assert_f((fd) >= 0, "file descriptor " #fd " failed\n")

#define igt_fail_on(expr) igt_assert(!(expr))
#define igt_fail_on_f(expr, f...) igt_assert_f(!(expr), f)
#define igt_skip_on(expr) igt_require(!(expr))
#define igt_skip_on_f(expr, f...) igt_require_f(!(expr), f)

#define igt_require(expr) \
	do { \
		if (!(expr)) \
			__igt_skip_check(__FILE__, __LINE__, __func__, #expr, \
					 NULL); \
	} while (0)

#define igt_require_f(expr, f...) \
	do { \
		if (!(expr)) \
			__igt_skip_check(__FILE__, __LINE__, __func__, #expr, \
					 f); \
	} while (0)

#endif /* UALINK_IGT_H */
