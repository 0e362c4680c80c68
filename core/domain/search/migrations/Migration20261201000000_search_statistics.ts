import { Migration } from '@mikro-orm/migrations';

// The planner's statistics of search_chunks.vector: with the default target (100) ANALYZE keeps the
// frequencies of about a thousand lexemes, and every other word is estimated at half the rarest of
// those. At 1.27M chunks that put three ORed rare words (a typo's alternatives) at 19k matches, and
// the planner chose to walk every chunk newest first, reading each one's vector, expecting to
// find 2,000 soon: it found ~60 and hit the statement timeout. With 1000, ANALYZE keeps ~4k
// lexemes down to 0.15% frequency, the same query is estimated at 2.8k and read through the GIN
// index. ANALYZE of those 1.27M chunks took 14 s (autovacuum's, in the background).
export class Migration20261201000000_search_statistics extends Migration {
  override up(): void {
    this.addSql(`alter table search_chunks alter column vector set statistics 1000;`);
  }

  override down(): void {
    this.addSql(`alter table search_chunks alter column vector set statistics -1;`);
  }
}
