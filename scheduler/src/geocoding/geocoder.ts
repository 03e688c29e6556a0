/** What a geocoder is asked: the address fields of a location. */
export interface Address {
  street: string;
  city: string;
  postalCode: string | null;
  country: string | null;
}

export interface Coordinates {
  lat: number;
  lng: number;
}

/**
 * Turns an address into coordinates. Implementations never throw: a failure or no match
 * is `null`, and the location is stored without coordinates.
 */
export interface Geocoder {
  readonly name: string;
  geocode(address: Address): Promise<Coordinates | null>;
}
