import { useApp } from '../app-context.ts';

export interface ShiftFacts {
  shift: { name: string; starts_at: string; ends_at: string };
  event: { name: string };
  role?: { name: string } | null | undefined;
  location?: Place | null | undefined;
}

/** A shift's place as the API describes it (name and address parts). */
export interface Place {
  name: string;
  street?: string | null;
  postal_code?: string | null;
  city?: string | null;
  country?: string | null;
}

/** "Pariser Platz 1, 10117 Berlin": the parts a place has, in the order a letter has them. */
export function addressLine(place: Place): string {
  const town = [place.postal_code, place.city].filter(Boolean).join(' ');
  return [place.street, town].filter(Boolean).join(', ');
}

/** When, what, as what and where: the same lines on every screen that lists shifts. */
export function ShiftSummary({
  facts,
  heading: Heading = 'h3',
  id,
}: {
  facts: ShiftFacts;
  heading?: 'h2' | 'h3';
  /** The heading's id, for the buttons it describes. */
  id?: string;
}) {
  const { t, format } = useApp();
  return (
    <>
      <Heading class="shift-time" id={id}>
        {format.range(facts.shift.starts_at, facts.shift.ends_at)}
      </Heading>
      <p class="shift-name">
        {facts.shift.name} · {facts.event.name}
      </p>
      <p class="shift-meta">
        {facts.role && <span class="chip">{facts.role.name}</span>}
        <span>{facts.location ? facts.location.name : t('common.noLocation')}</span>
      </p>
    </>
  );
}
