/** Signed values as horizontal bars, largest magnitude first, scaled to the largest. */
export function Bars({ values }: { values: Record<string, number> }) {
  const entries = Object.entries(values).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
  const largest = Math.max(1e-12, ...entries.map(([, v]) => Math.abs(v)));
  return (
    <table class="bars">
      <tbody>
        {entries.map(([name, value]) => (
          <tr key={name} class="bar-row">
            <th class="bar-name">{name}</th>
            <td class="bar-cell">
              <span
                class={value < 0 ? 'bar negative' : 'bar'}
                style={{ width: `${(Math.abs(value) / largest) * 100}%` }}
              />
            </td>
            <td class="num bar-value">{format(value)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A number short enough for a table: 4 significant digits. */
export function format(value: unknown): string {
  if (typeof value !== 'number') return JSON.stringify(value);
  if (Number.isInteger(value)) return String(value);
  return Number(value.toPrecision(4)).toString();
}
