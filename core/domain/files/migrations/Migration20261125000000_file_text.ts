import { Migration } from '@mikro-orm/migrations';

// The text of each file version, for search, written by the files-extract-text job after the
// version commits. extraction_state: 'pending' until the job has run, then 'extracted' (the text,
// and for a PDF each page's) or 'skipped' (no text to extract; extraction_note says why).
export class Migration20261125000000_file_text extends Migration {
  override up(): void {
    this.addSql(`alter table file_versions
      add column extraction_state text not null default 'pending',
      add column extraction_note text null,
      add column extracted_text text null,
      add column extracted_pages jsonb null;`);
  }
}
