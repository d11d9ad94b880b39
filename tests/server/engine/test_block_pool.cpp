// Block pool: refcounts, prefix cache by hash chain, LRU eviction.
#include <catch2/catch.hpp>

#include <vector>

#include "engine/block_pool.hpp"

using namespace seatrt::engine;

TEST_CASE("allocate until empty, release makes blocks available again") {
  BlockPool pool(3);
  auto a = pool.allocate(), b = pool.allocate(), c = pool.allocate();
  REQUIRE((a && b && c));
  CHECK_FALSE(pool.allocate());
  CHECK(pool.num_used() == 3);
  pool.release(*b);
  CHECK(pool.num_available() == 1);
  CHECK(pool.allocate() == b);
  CHECK_THROWS(pool.release(99));
}

TEST_CASE("cached blocks are shared, then evicted least recently freed first") {
  BlockPool pool(2);
  std::vector<int32_t> t1{1, 2, 3, 4}, t2{5, 6, 7, 8};
  const uint64_t h1 = block_hash(0, t1), h2 = block_hash(h1, t2);
  CHECK(h1 != h2);
  CHECK(block_hash(0, t2) != h2);  // the chain depends on the parent
  auto a = *pool.allocate(), b = *pool.allocate();
  pool.commit(a, h1, t1);
  pool.commit(b, h2, t2);
  auto shared = pool.acquire_cached(h1, t1);
  REQUIRE(shared == a);
  CHECK(pool.refcount(a) == 2);
  CHECK_FALSE(pool.acquire_cached(h1, t2));  // same hash, other tokens: no hit
  pool.release(a);
  pool.release(a);
  pool.release(b);
  CHECK(pool.num_used() == 0);
  CHECK(pool.num_cached() == 2);
  // a was freed first: it is evicted first.
  CHECK(pool.allocate() == a);
  CHECK_FALSE(pool.is_cached(h1, t1));
  CHECK(pool.is_cached(h2, t2));
}
