const integer = new Intl.NumberFormat("en-US")
const usd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 4 })

export const formatCount = (value: number): string => integer.format(value)
export const formatUsd = (value: number): string => usd.format(value)
