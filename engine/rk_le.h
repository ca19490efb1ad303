/* rk_le.h: explicit little-endian get/put of on-disk fields.
 * On-disk structures are never cast onto memory: every field is read and
 * written through these, byte by byte (compilers fold them to single loads). */
#ifndef RK_LE_H
#define RK_LE_H

#include <stdint.h>

static inline uint16_t rk_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}
static inline uint32_t rk_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t rk_get_le64(const uint8_t *p)
{
	return (uint64_t)rk_get_le32(p) | (uint64_t)rk_get_le32(p + 4) << 32;
}
static inline void rk_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void rk_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}
static inline void rk_put_le64(uint8_t *p, uint64_t v)
{
	rk_put_le32(p, (uint32_t)v);
	rk_put_le32(p + 4, (uint32_t)(v >> 32));
}
/* Big-endian, for foreign formats (md 0.90 is host-endian, DDF is BE). */
static inline uint16_t rk_get_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}
static inline uint32_t rk_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline uint64_t rk_get_be64(const uint8_t *p)
{
	return (uint64_t)rk_get_be32(p) << 32 | rk_get_be32(p + 4);
}
static inline void rk_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void rk_put_be32(uint8_t *p, uint32_t v)
{
	rk_put_be16(p, (uint16_t)(v >> 16));
	rk_put_be16(p + 2, (uint16_t)v);
}
static inline void rk_put_be64(uint8_t *p, uint64_t v)
{
	rk_put_be32(p, (uint32_t)(v >> 32));
	rk_put_be32(p + 4, (uint32_t)v);
}

/* Overflow-checked arithmetic on sizes: return 1 on overflow. */
static inline int rk_add_ovf(uint64_t a, uint64_t b, uint64_t *r)
{
	return __builtin_add_overflow(a, b, r);
}
static inline int rk_mul_ovf(uint64_t a, uint64_t b, uint64_t *r)
{
	return __builtin_mul_overflow(a, b, r);
}

#endif
