import { useMemo } from 'react';
import Select, { Type as SelectType, type SelectItem } from '@jetbrains/ring-ui-built/components/select/select';

export interface RingSelectProps {
  /** Accessible name of the control (Ring puts it on the combobox button). */
  label: string;
  value: string;
  options: readonly { value: string; label?: string }[];
  onChange: (value: string) => void;
  /** Shown as a visible label above the control. */
  visibleLabel?: string;
  className?: string;
  disabled?: boolean;
}

/** A Ring UI Select (button mode) over plain string values. */
export function RingSelect({ label, value, options, onChange, visibleLabel, className, disabled }: RingSelectProps) {
  const data = useMemo(() => options.map((o) => ({ key: o.value, label: o.label ?? o.value })), [options]);
  const selected = data.find((d) => d.key === value) ?? null;
  return (
    <Select
      type={SelectType.BUTTON}
      className={className}
      label={label}
      selectedLabel={visibleLabel}
      data={data}
      selected={selected}
      disabled={disabled}
      onChange={(item: SelectItem | null) => item && onChange(String(item.key))}
    />
  );
}
